// The registry of job kinds (see jobs.hpp for how to add one) and deck loading.
#include "app/jobs.hpp"

#include "core/throw.hpp"

namespace tessera::app {

const std::vector<JobKind>& job_kinds() {
  static const std::vector<JobKind> kinds = {
      {"pipeline", "generate or read a matrix, transpose it, reduce it, write the results",
       pipeline_schema, run_pipeline_job, nullptr},
      {"heat2d", "2-D heat equation (ADI), with checkpoints", heat2d_schema, run_heat2d_job,
       check_heat2d_deck},
  };
  return kinds;
}

const JobKind& find_job_kind(std::string_view name) {
  std::string known;
  for (const auto& k : job_kinds()) {
    if (name == k.name)
      return k;
    known += known.empty() ? "" : ", ";
    known += k.name;
  }
  TESSERA_THROW(InputError, "unknown job kind '{}' (known kinds: {})", name, known);
}

void common_schema(DeckSchema& s) {
  s.add("job.kind", std::string("pipeline"), "what to run", {});
  s.add("job.backend", std::string("auto"), "where kernels run: auto, cpu or cuda",
        {"auto", "cpu", "cuda"});
}

Deck load_deck(const std::optional<std::string>& path, const std::vector<std::string>& overrides) {
  Deck deck = path ? Deck::from_file(*path) : Deck::from_default();
  for (const auto& o : overrides)
    deck.apply_override(o);
  const std::string kind_name = deck.peek_string("job.kind", "pipeline");
  const JobKind* kind = nullptr;
  try {
    kind = &find_job_kind(kind_name);
  } catch (const InputError& e) {
    deck.fail_message("job.kind", e.what());
  }
  DeckSchema schema;
  common_schema(schema);
  kind->schema(schema);
  deck.validate(schema);
  if (kind->check)
    kind->check(deck);
  return deck;
}

} // namespace tessera::app

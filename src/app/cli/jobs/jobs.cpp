// The registry of job kinds (see jobs.hpp for how to add one) and deck loading.
#include "cli/jobs/jobs.hpp"

#include <algorithm>

#include "core/throw.hpp"

namespace tessera::app {

const std::vector<JobKind>& job_kinds() {
  static const std::vector<JobKind> kinds = {
      {"pipeline", "generate or read a matrix, transpose it, reduce it, write the results",
       pipeline_schema, check_pipeline_job, run_pipeline_job, check_pipeline_files, false},
      {"heat2d", "2-D heat equation (ADI), with checkpoints", heat2d_schema, check_heat2d_job,
       run_heat2d_job, check_heat2d_files, true},
  };
  return kinds;
}

namespace {

std::string kind_names() {
  std::string known;
  for (const auto& k : job_kinds())
    known += fmt::format("{}{}", known.empty() ? "" : ", ", k.name);
  return known;
}

std::string kind_choice() {
  std::string s;
  const auto& kinds = job_kinds();
  for (std::size_t i = 0; i < kinds.size(); ++i)
    s += fmt::format("{}\"{}\"",
                     i == 0                  ? ""
                     : i + 1 == kinds.size() ? " or "
                                             : ", ",
                     kinds[i].name);
  return s;
}

} // namespace

const JobKind& find_job_kind(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& k : job_kinds()) {
    if (name == k.name)
      return k;
    names.emplace_back(k.name);
  }
  const auto near = closest_match(name, names);
  TESSERA_THROW(InputError, "unknown job kind '{}'{} (known kinds: {})", name,
                near ? fmt::format("; did you mean '{}'?", *near) : std::string(), kind_names());
}

void common_schema(DeckSchema& s, std::string_view kind) {
  s.add("job.kind", std::string(kind), "what to run: " + kind_names(), {});
  s.add("job.backend", std::string("auto"), "where kernels run: auto, cpu or cuda",
        {"auto", "cpu", "cuda"});
}

const JobKind& deck_job_kind(const Deck& deck) {
  if (deck.has("job.kind")) {
    const std::string name = deck.peek_string("job.kind", "");
    try {
      return find_job_kind(name);
    } catch (const InputError& e) {
      deck.fail_message("job.kind", e.what());
    }
  }
  const std::vector<std::string> keys = deck.keys_set();
  if (keys.empty())
    TESSERA_THROW(InputError,
                  "{}: the deck is empty: it sets no key (start from inputs/default.toml, or "
                  "give at least [job] kind = {}; `tessera run` without a deck runs the "
                  "embedded default)",
                  deck.source(), kind_choice());
  // Without job.kind, a key (or its table) that only one kind knows tells the kind.
  std::vector<std::pair<const JobKind*, std::string>> votes;
  std::vector<DeckSchema> schemas;
  for (const auto& k : job_kinds()) {
    schemas.emplace_back();
    k.schema(schemas.back());
  }
  for (const auto& key : keys) {
    const JobKind* only = nullptr;
    int knowing = 0;
    for (std::size_t i = 0; i < schemas.size(); ++i) {
      bool knows = schemas[i].find(key) != nullptr;
      for (auto dot = key.find('.'); !knows && dot != std::string::npos;
           dot = key.find('.', dot + 1))
        knows = schemas[i].has_table(key.substr(0, dot));
      if (knows) {
        ++knowing;
        only = &job_kinds()[i];
      }
    }
    if (knowing == 1 &&
        std::none_of(votes.begin(), votes.end(), [&](const auto& v) { return v.first == only; }))
      votes.emplace_back(only, key);
  }
  if (votes.size() == 1)
    return *votes[0].first;
  if (votes.empty())
    TESSERA_THROW(InputError,
                  "{}: the deck names no job kind, and none of its keys belongs to one kind: "
                  "add [job] kind = {}",
                  deck.source(), kind_choice());
  std::string mixed;
  for (const auto& [kind, key] : votes)
    mixed += fmt::format("{}{} ({})", mixed.empty() ? "" : ", ", kind->name, key);
  TESSERA_THROW(InputError,
                "{}: the deck names no job kind and has keys of several kinds: {}; add [job] "
                "kind = {}",
                deck.source(), mixed, kind_choice());
}

namespace {

Deck load_checked(const std::optional<std::string>& path, const std::vector<std::string>& overrides,
                  int nranks, MPI_Comm files_comm) {
  Deck deck = path ? Deck::from_file(*path) : Deck::from_default();
  for (const auto& o : overrides)
    deck.apply_override(o);
  const JobKind& kind = deck_job_kind(deck);
  DeckSchema schema;
  common_schema(schema, kind.name);
  kind.schema(schema);
  deck.check(schema);
  kind.check(deck, nranks);
  if (files_comm != MPI_COMM_NULL && kind.check_files)
    kind.check_files(deck, files_comm);
  deck.throw_problems();
  return deck;
}

} // namespace

Deck load_deck(const std::optional<std::string>& path, const std::vector<std::string>& overrides,
               int nranks) {
  return load_checked(path, overrides, nranks, MPI_COMM_NULL);
}

Deck load_deck_with_files(const std::optional<std::string>& path,
                          const std::vector<std::string>& overrides, MPI_Comm comm, int nranks) {
  return load_checked(path, overrides, nranks, comm);
}

} // namespace tessera::app

// The job kinds `tessera run` and `tessera check` know: [job] kind = "NAME" in a deck picks one.
//
// A job kind is a name, a one-line summary, a function that declares its deck keys (its
// schema; the common keys job.kind and job.backend are added for every kind), a function that
// runs it, and optionally one that checks keys against each other once the deck is valid (run
// by `tessera run` and `tessera check` alike). Kinds are listed explicitly in jobs.cpp:
//
//   // jobs.hpp: declare the functions
//   void heat2d_schema(DeckSchema& s);
//   int run_heat2d_job(const Deck& deck, const Context& ctx);
//   void check_heat2d_deck(const Deck& deck);
//   // jobs.cpp, in job_kinds(): one line
//   {"heat2d", "2-D heat equation (ADI)", heat2d_schema, run_heat2d_job, check_heat2d_deck},
//
// A job reads its settings with deck.get<T>("table.key") (every key it reads must be declared
// in its schema), reports bad values with deck.fail("table.key", "…") so the message names the
// file and line, stores deck.effective_toml() in its output files (io::Provenance::deck), and
// returns the process exit code. It runs on every rank; rank 0 logs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/commands.hpp"
#include "app/deck.hpp"

namespace tessera::app {

using JobSchemaFn = void (*)(DeckSchema&);
using JobRunFn = int (*)(const Deck&, const Context&);
using JobCheckFn = void (*)(const Deck&);

struct JobKind {
  const char* name;
  const char* summary;
  JobSchemaFn schema;
  JobRunFn run;
  JobCheckFn check; // nullptr: nothing beyond the schema
};

// Every job kind of this build, in the order `tessera run --help` lists them.
const std::vector<JobKind>& job_kinds();
// Throws InputError naming the known kinds when there is none called `name`.
const JobKind& find_job_kind(std::string_view name);

// The keys every job kind accepts: job.kind, job.backend.
void common_schema(DeckSchema& s);

// Loads a deck (the file, or the embedded default when `path` is empty), applies `--set`
// overrides in order, looks up job.kind and validates against that kind's schema. Throws
// InputError naming the key, file and line on any problem. Not collective: every rank loads
// the same deck (wrap in mpi::collectively where ranks must agree).
Deck load_deck(const std::optional<std::string>& path, const std::vector<std::string>& overrides);

// --- job kinds -------------------------------------------------------------------------------

// pipeline: generate or read a matrix, transpose it, reduce it, write what was asked
// (job_pipeline.cpp; keys in docs/decks.md).
void pipeline_schema(DeckSchema& s);
int run_pipeline_job(const Deck& deck, const Context& ctx);

// heat2d: the ADI heat equation solver (job_heat2d.cpp; keys in inputs/heat2d.toml).
void heat2d_schema(DeckSchema& s);
int run_heat2d_job(const Deck& deck, const Context& ctx);
// The output and the checkpoint must be different files.
void check_heat2d_deck(const Deck& deck);

} // namespace tessera::app

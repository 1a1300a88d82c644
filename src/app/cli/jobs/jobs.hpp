// The job kinds `tessera run` and `tessera check` know: [job] kind = "NAME" in a deck picks one.
//
// A job kind is a name, a one-line summary, a function that declares its deck keys (its
// schema, with ranges and choices; the common keys job.kind and job.backend are added for every
// kind), a function that checks what the schema cannot (rules between keys, the rank count) and
// a function that runs it, and optionally one that opens the files a deck reads (for `tessera
// check`; nullptr when the kind reads none). Kinds are listed explicitly in jobs.cpp:
//
//   // jobs.hpp: declare the functions
//   void heat2d_schema(DeckSchema& s);
//   void check_heat2d_job(const Deck& deck, int nranks);
//   int run_heat2d_job(const Deck& deck, const Context& ctx);
//   void check_heat2d_files(const Deck& deck, MPI_Comm comm);
//   // jobs.cpp, in job_kinds(): one line
//   {"heat2d", "2-D heat equation (ADI)", heat2d_schema, check_heat2d_job, run_heat2d_job,
//    check_heat2d_files, true},
//
// The check records each problem with deck.problem("table.key", "…") (the message then names
// the file and line); `tessera check` and `tessera run` both call it through load_deck(), so
// they accept the same decks. A job reads its settings with deck.get<T>("table.key") (every key
// it reads must be declared in its schema), stores deck.effective_toml() in its output files
// (io::Provenance::deck), and returns the process exit code. It runs on every rank; rank 0 logs.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/decks/deck.hpp"

namespace tessera::app {

using JobSchemaFn = void (*)(DeckSchema&);
using JobCheckFn = void (*)(const Deck&, int nranks);
using JobRunFn = int (*)(const Deck&, const Context&);
// Collective over comm: opens every file the deck reads (read-only) and records what `run` would
// find wrong with them as deck problems (Deck::problem), all of them, instead of stopping at the
// first.
using JobFilesFn = void (*)(const Deck&, MPI_Comm comm);

struct JobKind {
  const char* name;
  const char* summary;
  JobSchemaFn schema;
  JobCheckFn check;
  JobRunFn run;
  JobFilesFn check_files;
  // Stops cleanly on SIGTERM / SIGUSR1 (a checkpoint); other kinds end at the signal.
  bool stops_on_signal;
};

// Every job kind of this build, in the order `tessera run --help` lists them.
const std::vector<JobKind>& job_kinds();
// Throws InputError naming the known kinds when there is none called `name`.
const JobKind& find_job_kind(std::string_view name);

// The keys every job kind accepts: job.kind (whose default is `kind`), job.backend.
void common_schema(DeckSchema& s, std::string_view kind);

// The job kind of a deck: its job.kind; without one, the only kind whose tables or keys the
// deck uses ([matrix] → pipeline, [grid] → heat2d). Throws InputError naming the deck when it is
// empty, uses keys of several kinds, or none that belongs to one kind.
const JobKind& deck_job_kind(const Deck& deck);

// Loads a deck (the file, or the embedded default when `path` is empty), applies `--set`
// overrides in order, finds its job kind (deck_job_kind) and checks it against that kind's
// schema and the kind's own check for `nranks` ranks. Throws one InputError listing every
// problem, each naming the key, file and line. Not collective: every rank loads the same deck
// (wrap in mpi::collectively where ranks must agree).
Deck load_deck(const std::optional<std::string>& path, const std::vector<std::string>& overrides,
               int nranks = 1);
// load_deck(), and the files the deck reads opened and checked (JobFilesFn) before the problems
// are reported, all together. Collective over comm (`tessera check`).
Deck load_deck_with_files(const std::optional<std::string>& path,
                          const std::vector<std::string>& overrides, MPI_Comm comm, int nranks);

// --- job kinds -------------------------------------------------------------------------------

// pipeline: generate or read a matrix, transpose it, reduce it, write what was asked
// (job_pipeline.cpp; keys in docs/decks.md).
void pipeline_schema(DeckSchema& s);
void check_pipeline_job(const Deck& deck, int nranks);
int run_pipeline_job(const Deck& deck, const Context& ctx);
void check_pipeline_files(const Deck& deck, MPI_Comm comm);

// heat2d: the ADI heat equation solver (job_heat2d.cpp; keys in inputs/heat2d.toml).
void heat2d_schema(DeckSchema& s);
void check_heat2d_job(const Deck& deck, int nranks);
int run_heat2d_job(const Deck& deck, const Context& ctx);
void check_heat2d_files(const Deck& deck, MPI_Comm comm);

} // namespace tessera::app

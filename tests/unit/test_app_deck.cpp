// Decks: parsing, overrides, validation messages (key, file, line) and the effective deck.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <vector>

#include <unistd.h>

#include "cli/decks/deck.hpp"
#include "cli/jobs/jobs.hpp"
#include "core/error.hpp"

namespace tessera::app {
namespace {

DeckSchema demo_schema() {
  DeckSchema s;
  s.add("job.kind", "demo", "kind");
  s.add("grid.nx", std::int64_t{16}, "cells in x");
  s.add("grid.alpha", 0.5, "diffusivity");
  s.add("grid.periodic", false, "periodic boundaries");
  s.add("grid.name", std::string("a"), "name", {"a", "b"});
  s.add("out.ops", std::vector<std::string>{"sum"}, "ops");
  s.add("top", std::int64_t{1}, "a top-level key");
  return s;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError thrown)";
}

TEST(Deck, DefaultsAndValues) {
  auto d = Deck::from_string("[grid]\nnx = 32\nalpha = 2\n", "t.toml");
  d.validate(demo_schema());
  EXPECT_EQ(d.get<std::int64_t>("grid.nx"), 32);
  EXPECT_EQ(d.get<double>("grid.alpha"), 2.0); // integer accepted for a float key
  EXPECT_FALSE(d.get<bool>("grid.periodic"));
  EXPECT_EQ(d.get<std::string>("grid.name"), "a");
  EXPECT_EQ(d.get<std::vector<std::string>>("out.ops"), std::vector<std::string>{"sum"});
  EXPECT_EQ(d.keys_read().size(), 5u);
  EXPECT_TRUE(d.has("grid.nx"));
  EXPECT_FALSE(d.has("grid.periodic"));
  EXPECT_EQ(d.where("grid.nx"), "t.toml:2");
  EXPECT_THROW(d.get<std::int64_t>("grid.ny"), InternalError);
  EXPECT_THROW(d.get<double>("grid.nx"), InternalError);
}

TEST(Deck, OverridesAreTypedOrStrings) {
  std::mt19937_64 rng(std::random_device{}());
  const auto nx = static_cast<std::int64_t>(rng() % 100000);
  SCOPED_TRACE(nx);
  auto d = Deck::from_string("[grid]\nnx = 3\n", "t.toml");
  d.apply_override("grid.nx=" + std::to_string(nx));
  d.apply_override("grid.periodic=true");
  d.apply_override("grid.name=b");
  d.apply_override("out.ops=sum,max");
  d.apply_override("grid.alpha = 1.5e3");
  d.validate(demo_schema());
  EXPECT_EQ(d.get<std::int64_t>("grid.nx"), nx);
  EXPECT_TRUE(d.get<bool>("grid.periodic"));
  EXPECT_EQ(d.get<std::string>("grid.name"), "b");
  EXPECT_EQ(d.get<std::vector<std::string>>("out.ops"), (std::vector<std::string>{"sum", "max"}));
  EXPECT_EQ(d.get<double>("grid.alpha"), 1500.0);
  EXPECT_EQ(d.where("grid.nx"), "--set");
  EXPECT_NE(message_of([] { Deck::from_default().apply_override("novalue"); }).find("key=value"),
            std::string::npos);
}

TEST(Deck, ErrorsNameKeyFileAndLine) {
  auto unknown = message_of([] {
    auto d = Deck::from_string("[grid]\nnx = 3\nny = 4\n", "u.toml");
    d.validate(demo_schema());
  });
  EXPECT_NE(unknown.find("u.toml:3: grid.ny: unknown key"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("nx, alpha"), std::string::npos) << unknown;

  auto table = message_of([] {
    auto d = Deck::from_string("[solver]\nx = 1\n", "u.toml");
    d.validate(demo_schema());
  });
  EXPECT_NE(table.find("unknown table [solver]"), std::string::npos) << table;

  auto type = message_of([] {
    auto d = Deck::from_string("\n[grid]\nnx = \"big\"\n", "w.toml");
    d.validate(demo_schema());
  });
  EXPECT_NE(type.find("w.toml:3: grid.nx: expected an integer, got a string"), std::string::npos)
      << type;

  auto choice = message_of([] {
    auto d = Deck::from_string("[grid]\nname = \"c\"\n", "w.toml");
    d.validate(demo_schema());
  });
  EXPECT_NE(choice.find("'c' is not one of a, b"), std::string::npos) << choice;

  auto set = message_of([] {
    auto d = Deck::from_string("", "w.toml");
    d.apply_override("grid.periodic=3");
    d.validate(demo_schema());
  });
  EXPECT_NE(set.find("--set: grid.periodic: expected a boolean"), std::string::npos) << set;

  auto malformed = message_of([] { Deck::from_string("[grid\nnx = 1\n", "m.toml"); });
  EXPECT_NE(malformed.find("m.toml:1:"), std::string::npos) << malformed;
  EXPECT_NE(malformed.find("malformed TOML"), std::string::npos) << malformed;

  auto missing = message_of([] { Deck::from_file("/nonexistent/deck.toml"); });
  EXPECT_NE(missing.find("'/nonexistent/deck.toml' not found"), std::string::npos) << missing;
}

TEST(Deck, EffectiveTomlRoundTrips) {
  auto d = Deck::from_string("top = 7\n[grid]\nalpha = 0.25\nname = \"b\"\n", "r.toml");
  d.apply_override("out.ops=[\"max\", \"norm2\"]");
  d.validate(demo_schema());
  const std::string eff = d.effective_toml();
  auto back = Deck::from_string(eff, "eff.toml");
  back.validate(demo_schema());
  // The first line names the source deck; everything after it must be the same.
  const std::string again = back.effective_toml();
  EXPECT_EQ(again.substr(again.find('\n')), eff.substr(eff.find('\n')));
  EXPECT_EQ(back.get<std::int64_t>("top"), 7);
  EXPECT_EQ(back.get<std::int64_t>("grid.nx"), 16);
  EXPECT_EQ(back.get<double>("grid.alpha"), 0.25);
  EXPECT_EQ(back.get<std::vector<std::string>>("out.ops"),
            (std::vector<std::string>{"max", "norm2"}));
}

TEST(Deck, EmbeddedDefaultValidatesForItsKind) {
  auto d = load_deck(std::nullopt, {});
  // The embedded default is the small heat2d case (inputs/default.toml).
  EXPECT_EQ(d.get<std::string>("job.kind"), "heat2d");
  EXPECT_GT(d.get<std::int64_t>("grid.nx"), 0);
  auto bad = message_of([] { load_deck(std::nullopt, {"job.kind=nothing"}); });
  EXPECT_NE(bad.find("unknown job kind 'nothing'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("--set: job.kind"), std::string::npos) << bad;
  auto typo = message_of([] { load_deck(std::nullopt, {"job.kind=heat2"}); });
  EXPECT_NE(typo.find("did you mean 'heat2d'?"), std::string::npos) << typo;
}

// A deck file written to a temporary path, removed at the end of the test.
class DeckFile {
public:
  explicit DeckFile(const std::string& text) {
    char name[] = "/tmp/tessera-deck-XXXXXX";
    const int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~DeckFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

std::string load_message(const std::string& text, const std::vector<std::string>& sets,
                         int nranks = 1) {
  const DeckFile f(text);
  return message_of([&] { load_deck(f.path(), sets, nranks); });
}

TEST(DeckSchema, RangesChoicesAndChecks) {
  DeckSchema s;
  s.add("a.dt", 1.0, "step").greater_than(0);
  s.add("a.n", std::int64_t{2}, "count", 1, 9);
  s.add("a.x", 0.0, "any finite number");
  s.add("a.ops", std::vector<std::string>{"sum"}, "ops", {"sum", "max"}).distinct_items();
  s.add("a.size", std::string(""), "size").checked_by([](const DeckValue& v) {
    return std::get<std::string>(v) == "lots" ? std::string("'lots' is not a size") : std::string();
  });
  const auto problem = [&](const std::string& set) {
    auto d = Deck::from_string("", "r.toml");
    d.apply_override(set);
    return message_of([&] { d.validate(s); });
  };
  EXPECT_NE(problem("a.dt=0").find("a.dt: must be greater than 0, got 0"), std::string::npos);
  EXPECT_NE(problem("a.dt=-1").find("must be greater than 0, got -1"), std::string::npos);
  EXPECT_NE(problem("a.dt=nan").find("a.dt: must be a finite number, got nan"), std::string::npos);
  EXPECT_NE(problem("a.x=inf").find("a.x: must be a finite number, got inf"), std::string::npos);
  EXPECT_NE(problem("a.x=-inf").find("got -inf"), std::string::npos);
  EXPECT_NE(problem("a.n=0").find("a.n: must be at least 1, got 0"), std::string::npos);
  EXPECT_NE(problem("a.n=10").find("a.n: must be at most 9, got 10"), std::string::npos);
  EXPECT_NE(problem(R"(a.ops=["sum","sum"])").find("lists 'sum' twice"), std::string::npos);
  EXPECT_NE(problem("a.ops=sum,mx").find("'mx' is not one of sum, max (did you mean 'max'?)"),
            std::string::npos);
  EXPECT_NE(problem("a.size=lots").find("--set: a.size: 'lots' is not a size"), std::string::npos);
  EXPECT_EQ(problem("a.dt=1e-300"), "(no InputError thrown)");
}

TEST(DeckSchema, EveryProblemAtOnceInLineOrder) {
  const std::string msg = message_of([] {
    auto d = Deck::from_string("[grid]\nnx = \"big\"\nnmae = \"a\"\n[out]\nops = [1]\n"
                               "[solvr]\nx = 1\n",
                               "m.toml");
    d.apply_override("grid.alpha=inf");
    d.check(demo_schema());
    EXPECT_EQ(d.get<std::int64_t>("grid.nx"), 16); // the wrong type reads as the default
    d.problem("top", "a rule of the job");
    d.problem("grid.nx", "not repeated: the schema's problem comes first");
    d.throw_problems();
  });
  EXPECT_NE(msg.find("m.toml: 6 problems:"), std::string::npos) << msg;
  const std::vector<std::string> expected = {
      "\n  m.toml:2: grid.nx: expected an integer, got a string",
      "\n  m.toml:3: grid.nmae: unknown key; did you mean grid.name?",
      "\n  m.toml:5: out.ops: expected a list of strings, got an array holding an integer",
      "\n  m.toml:6: solvr: unknown table [solvr]",
      "\n  --set: grid.alpha: must be a finite number, got inf",
      "\n  m.toml: top: a rule of the job"};
  std::size_t at = 0;
  for (const auto& e : expected) {
    const auto found = msg.find(e, at);
    EXPECT_NE(found, std::string::npos) << "'" << e << "' (in this order) in:\n" << msg;
    if (found != std::string::npos)
      at = found;
  }
  EXPECT_EQ(msg.find("not repeated"), std::string::npos) << msg;
}

TEST(DeckSchema, DidYouMean) {
  EXPECT_EQ(closest_match("rowz", {"rows", "cols"}), "rows");
  EXPECT_EQ(closest_match("physics.alpah", {"physics.alpha", "grid.lx"}), "physics.alpha");
  EXPECT_EQ(closest_match("colums", {"rows", "columns"}), "columns");
  EXPECT_EQ(closest_match("banana", {"rows", "columns"}), std::nullopt);
  auto top = message_of([] {
    auto d = Deck::from_string("nx = 3\n", "t.toml");
    d.validate(demo_schema());
  });
  EXPECT_NE(top.find("t.toml:1: nx: unknown key; did you mean grid.nx?"), std::string::npos) << top;
  auto table = message_of([] {
    auto d = Deck::from_string("[gird]\nnx = 3\n", "t.toml");
    d.validate(demo_schema());
  });
  EXPECT_NE(table.find("t.toml:1: gird: unknown table [gird]; did you mean [grid]?"),
            std::string::npos)
      << table;
}

// Nesting toml++ would parse by recursion (a 40000-part header overflowed its stack) is refused
// before parsing, naming the file and line; ordinary decks are not.
TEST(Deck, DeepNestingIsRefusedBeforeParsing) {
  std::string header = "[a";
  for (int i = 0; i < 40000; ++i)
    header += ".a";
  const std::string deep = message_of([&] {
    Deck::from_string("# a deck\n[job]\nkind = \"heat2d\"\n" + header + "]\nx = 1\n", "d.toml");
  });
  EXPECT_NE(deep.find("d.toml:4: keys, tables and arrays nest more than 64 levels"),
            std::string::npos)
      << deep.substr(0, 300);
  std::string key = "x = 1\n";
  for (int i = 0; i < 100; ++i)
    key = "a." + key;
  EXPECT_NE(message_of([&] { Deck::from_string("\n\n" + key, "k.toml"); }).find("k.toml:3:"),
            std::string::npos);
  const std::string arrays = "v = " + std::string(100, '[') + std::string(100, ']') + "\n";
  EXPECT_NE(message_of([&] { Deck::from_string(arrays, "v.toml"); }).find("v.toml:1:"),
            std::string::npos);
  std::string inl = "v = ";
  for (int i = 0; i < 40; ++i)
    inl += "{ b.c = ";
  inl += "1" + std::string(40, '}') + "\n";
  EXPECT_NE(message_of([&] { Deck::from_string(inl, "i.toml"); }).find("i.toml:1:"),
            std::string::npos);
  // Valid TOML the scan must get through: strings holding brackets, dots and quotes, multi-line
  // strings and arrays, comments, dates, inline tables, arrays of tables.
  std::string dots = "[not.a.header";
  for (int i = 0; i < 80; ++i)
    dots += ".a";
  const std::string fine = "# " + dots + "]\n" + R"(title = "a [quoted] \" string.with.dots"
lit = 'C:\path.[x]'
ml = """
)" + dots + R"(]
"""
ml2 = '''a ''b'' ''c'''
"quoted.key".bare = 1.5
when = 1979-05-27 07:32:00Z
list = [
  1.0, 2.5, # a comment ]
  [3, 4], [], {x = 1, y.z = [2]},
]
point = { x = 1, y = { z = "}" } }
[[fruit.variety]]
name = "plantain"
[x."y.z".w]
v = +inf
)";
  EXPECT_EQ(message_of([&] { Deck::from_string(fine, "fine.toml"); }), "(no InputError thrown)");
}

TEST(Deck, EmptyOrUnrecognisableDecksAreErrorsNamingTheFile) {
  for (const char* text : {"", "# only comments\n\n", "[job]\n", "[grid]\n[matrix]\n"}) {
    const std::string m = load_message(text, {});
    EXPECT_NE(m.find("the deck is empty: it sets no key"), std::string::npos) << m;
    EXPECT_NE(m.find("/tmp/tessera-deck-"), std::string::npos) << m;
  }
  for (const char* text :
       {"[output]\nfile = \"x.h5\"\n", "[job]\nbackend = \"cpu\"\n", "rows = 3\n"}) {
    const std::string m = load_message(text, {});
    EXPECT_NE(m.find("names no job kind, and none of its keys belongs to one kind"),
              std::string::npos)
        << text << ": " << m;
  }
  const std::string mixed = load_message("[matrix]\nrows = 3\n[grid]\nnx = 4\n", {});
  EXPECT_NE(mixed.find("has keys of several kinds: "), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("pipeline (matrix.rows)"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("heat2d (grid.nx)"), std::string::npos) << mixed;
}

TEST(Deck, TheJobKindIsInferredFromKeysOnlyOneKindKnows) {
  const DeckFile pipeline("[matrix]\nrows = 3\n[output]\nfile = \"\"\n");
  EXPECT_EQ(load_deck(pipeline.path(), {}).get<std::string>("job.kind"), "pipeline");
  const DeckFile heat("[output]\nfile = \"\"\n[grid]\nnx = 8\n");
  const Deck d = load_deck(heat.path(), {});
  EXPECT_EQ(d.get<std::string>("job.kind"), "heat2d");
  EXPECT_NE(d.effective_toml().find("kind = \"heat2d\""), std::string::npos);
  // An unknown key in a table of one kind still tells the kind (and is then an error).
  EXPECT_NE(load_message("[matrix]\nrowz = 3\n", {})
                .find("matrix.rowz: unknown key; did you mean matrix.rows?"),
            std::string::npos);
  const DeckFile empty("");
  EXPECT_EQ(load_deck(empty.path(), {"time.steps=3"}).get<std::string>("job.kind"), "heat2d");
}

// What `tessera run` refuses, `tessera check` refuses: both go through load_deck with the rank
// count, and every problem names its key.
TEST(Deck, Heat2dRangesAndRules) {
  const std::string heat = "[job]\nkind = \"heat2d\"\n";
  const auto refused = [&](const std::string& set, const std::string& key, const std::string& what,
                           int nranks = 1) {
    const std::string m = load_message(heat, {set}, nranks);
    EXPECT_EQ(m.rfind("--set: " + key + ": ", 0), 0u) << set << ": " << m;
    EXPECT_NE(m.find(what), std::string::npos) << set << ": " << m;
  };
  refused("time.dt=0", "time.dt", "must be greater than 0, got 0");
  refused("time.dt=-1", "time.dt", "must be greater than 0");
  refused("grid.nx=0", "grid.nx", "must be at least 1, got 0");
  refused("time.steps=-5", "time.steps", "must be at least 0, got -5");
  refused("physics.alpha=-2", "physics.alpha", "must be greater than 0");
  refused("physics.alpha=0", "physics.alpha", "must be greater than 0, got 0");
  refused("physics.alpha=nan", "physics.alpha", "must be a finite number, got nan");
  refused("grid.lx=-1", "grid.lx", "must be greater than 0");
  refused("boundary.value=inf", "boundary.value", "must be a finite number, got inf");
  refused("output.checkpoint_every=-1", "output.checkpoint_every", "must be at least 0");
  refused("output.snapshot_queue=0", "output.snapshot_queue", "must be at least 1, got 0");
  refused("initial.width=-1", "initial.width", "must be at least 0");
  refused("initial.kind=sinus", "initial.kind", "must be sine, gaussian, an HDF5 dataset");
  refused("grid.lx=1e-300", "grid.lx",
          "1e-300 over grid.nx = 256 unknowns gives the grid spacing dx = 3.89e-303, whose "
          "square underflows to 0");
  refused("grid.ly=1e300", "grid.ly", "whose square overflows");
  refused("grid.lx=1e-150", "grid.lx", "alpha dt / (2 dx^2) = ");
  refused("grid.ny=3", "grid.ny", "3 x-lines leave some of the 4 ranks without one", 4);
  EXPECT_EQ(load_message(heat, {"grid.lx=1e-70"}), "(no InputError thrown)");
  // Several at once, each named.
  const std::string all = load_message(
      heat, {"time.dt=0", "grid.nx=0", "physics.alpah=1", "boundary.value=inf", "grid.ly=1e300"});
  EXPECT_NE(all.find(": 5 problems:"), std::string::npos) << all;
  for (const char* key :
       {"time.dt:", "grid.nx:", "physics.alpah: unknown key; did you mean physics.alpha?",
        "boundary.value:", "grid.ly:"})
    EXPECT_NE(all.find(key), std::string::npos) << key << " in " << all;
}

TEST(Deck, PipelineRangesAndRules) {
  const std::string pipe = "[job]\nkind = \"pipeline\"\n";
  const auto refused = [&](const std::string& set, const std::string& key,
                           const std::string& what) {
    const std::string m = load_message(pipe, {set});
    EXPECT_NE(m.find("--set: " + key + ": " + what), std::string::npos) << set << ": " << m;
  };
  refused("reduce.ops=[]", "reduce.ops", "is empty");
  refused(R"(reduce.ops=["sum","sum"])", "reduce.ops", "lists 'sum' twice");
  refused("staging.memory_limit=lots", "staging.memory_limit", "'lots' is not a size");
  refused("staging.chunk_size=1XB", "staging.chunk_size", "'1XB' is not a size");
  refused("staging.chunk_shape=diag", "staging.chunk_shape", "'diag' is not one of rows, columns");
  refused("matrix.input=nodataset", "matrix.input", "");
  EXPECT_EQ(load_message(pipe, {"reduce.ops=[]", "reduce.enabled=false"}),
            "(no InputError thrown)");
}

} // namespace
} // namespace tessera::app

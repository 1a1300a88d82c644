// Decks: parsing, overrides, validation messages (key, file, line) and the effective deck.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "app/deck.hpp"
#include "app/jobs.hpp"
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
}

} // namespace
} // namespace tessera::app

// Input decks: TOML files (or the embedded default) plus `--set key=value` overrides, checked
// against the schema of their job kind. Every key a job reads is declared in a DeckSchema with
// its type, default, one-line help and allowed values (range, choices, a check), so that
//   - every problem of a deck (unknown keys, wrong types, values out of range) is reported at
//     once, each naming the key, the file and the line, unknown keys with a "did you mean",
//   - `tessera check` and every output file show the complete effective deck (defaults too).
//
//   DeckSchema s;
//   s.add("matrix.rows", std::int64_t{1000}, "rows of the generated matrix", 1);  // >= 1
//   s.add("time.dt", 1e-4, "time step").greater_than(0);
//   Deck deck = Deck::from_file("job.toml");
//   deck.apply_override("matrix.rows=4000");
//   deck.check(s);                           // records every problem of every key
//   auto rows = deck.get<std::int64_t>("matrix.rows");
//   if (rows % 2) deck.problem("matrix.rows", "must be even");   // a job's own rule
//   deck.throw_problems();                   // one InputError listing them all
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace toml {
inline namespace v3 {
class table;
}
} // namespace toml

namespace tessera::app {

// The TOML text of inputs/default.toml, compiled into the binary.
std::string_view embedded_default_deck();

// A deck value: integer, floating point, boolean, string or list of strings.
using DeckValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::string>>;

// Checks a value of the right type beyond ranges and choices: "" when it is fine, else what is
// wrong with it ("'lots' is not a size").
using DeckCheck = std::function<std::string(const DeckValue&)>;

struct DeckKey {
  std::string key;                  // dotted: "matrix.rows"
  DeckValue value;                  // the default; its alternative is the key's type
  std::string help;                 // one line, printed as a comment by effective_toml()
  std::vector<std::string> choices; // allowed strings, also for list items (empty: any)
  std::optional<double> min, max;   // allowed range of numbers (floating point: always finite)
  bool min_exclusive = false;       // min itself is not allowed (time.dt > 0)
  bool distinct = false;            // lists: no item twice
  DeckCheck check;                  // further check of the value (null: none)

  // Modifiers for DeckSchema::add(...).greater_than(0) and the like.
  DeckKey& greater_than(double lo) {
    min = lo;
    min_exclusive = true;
    return *this;
  }
  DeckKey& distinct_items() {
    distinct = true;
    return *this;
  }
  DeckKey& checked_by(DeckCheck f) {
    check = std::move(f);
    return *this;
  }
};

// The keys a job kind accepts, in the order effective_toml() prints them. add() returns the new
// key for the modifiers above; the reference is valid until the next add().
class DeckSchema {
public:
  DeckKey& add(std::string key, std::int64_t def, std::string help);
  DeckKey& add(std::string key, int def, std::string help) {
    return add(std::move(key), std::int64_t{def}, std::move(help));
  }
  // With an allowed range [min, max] (inclusive).
  DeckKey& add(std::string key, std::int64_t def, std::string help, std::int64_t min,
               std::int64_t max = INT64_MAX);
  DeckKey& add(std::string key, double def, std::string help);
  DeckKey& add(std::string key, double def, std::string help, double min, double max = HUGE_VAL);
  DeckKey& add(std::string key, bool def, std::string help);
  DeckKey& add(std::string key, const char* def, std::string help);
  DeckKey& add(std::string key, std::string def, std::string help,
               std::vector<std::string> choices = {});
  DeckKey& add(std::string key, std::vector<std::string> def, std::string help,
               std::vector<std::string> choices = {});

  const DeckKey* find(std::string_view key) const noexcept;
  const std::vector<DeckKey>& keys() const noexcept { return keys_; }
  // True when some key lies in table `prefix` ("matrix", "a.b") or below it.
  bool has_table(std::string_view prefix) const noexcept;

private:
  DeckKey& add_key(DeckKey k);
  std::vector<DeckKey> keys_;
};

// The candidate closest to `word` by edit distance (a transposition counts as one edit) when it
// is close enough to be a typo of it; nullopt otherwise.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// Nesting that toml++ parses by recursion (a header [a.a.a…] of 40000 parts overflows the stack)
// is refused before parsing: at most this many levels of dotted keys, tables and arrays.
inline constexpr int kMaxDeckNesting = 64;

class Deck {
public:
  // Parses a TOML file; malformed TOML throws InputError "FILE:LINE:COL: <parser message>",
  // nesting deeper than kMaxDeckNesting "FILE:LINE: …", a missing or unreadable file an
  // InputError naming it.
  static Deck from_file(const std::string& path);
  // The embedded default deck (source name "(embedded default deck)").
  static Deck from_default();
  static Deck from_string(std::string_view text, std::string source_name);

  Deck(Deck&&) noexcept;
  Deck& operator=(Deck&&) noexcept;
  ~Deck();

  // "key=value": the value is parsed as a TOML value (2000, 1.5e3, true, "x", ["a","b"]);
  // when that fails it is taken as a string (--set matrix.dtype=f32). Errors say "--set".
  void apply_override(std::string_view assignment);

  // A raw string value before validation (for job.kind, which picks the schema); `def` when
  // the key is absent. Throws InputError naming file and line when it is not a string.
  std::string peek_string(std::string_view key, std::string_view def) const;

  // Checks every key against the schema and records every problem (problem() below): unknown
  // keys (with a "did you mean" for typos) and tables, wrong types, numbers out of range or not
  // finite, strings not among the choices, lists with repeated items where they must be
  // distinct, values the key's check refuses. Integers are accepted for floating-point keys, and
  // a comma-separated string for lists of strings. Must be called before get().
  void check(const DeckSchema& schema);
  // check(), then throw_problems().
  void validate(const DeckSchema& schema);

  // Records a problem "<where>: <key>: <message>"; only the first one of each key is kept (a
  // job's own rule then does not repeat what the schema already said about the key).
  void problem(std::string_view key, std::string message) const;
  bool has_problem(std::string_view key) const;
  bool has_problems() const noexcept { return !problems_.empty(); }
  // Throws InputError when problems were recorded: one is "<where>: <key>: <message>", several
  // "<source>: N problems:" followed by one indented line each, in the order of the deck's lines.
  void throw_problems() const;

  // The dotted keys of every value the deck sets (file and --set), tables not included.
  std::vector<std::string> keys_set() const;

  // The value of a declared key (the deck's, else the schema default; also the default when the
  // deck's value has the wrong type, which check() recorded as a problem). T is std::int64_t,
  // double, bool, std::string or std::vector<std::string>, matching the declared type.
  // Records the key as read. Reading an undeclared key is an InternalError (a bug).
  template <class T>
  T get(std::string_view key) const;

  // True when the deck (file or --set) gives the key explicitly.
  bool has(std::string_view key) const;
  // "FILE:LINE" of the key's value, "--set" for overrides, "FILE" when it only has a default.
  std::string where(std::string_view key) const;
  const std::string& source() const noexcept { return source_; }

  // Throws InputError "<where>: <key>: <message>".
  [[noreturn]] void fail_message(std::string_view key, const std::string& message) const;
  template <class... Args>
  [[noreturn]] void fail(std::string_view key, fmt::format_string<Args...> f,
                         Args&&... args) const {
    fail_message(key, fmt::format(f, std::forward<Args>(args)...));
  }

  // The complete effective deck as TOML (every declared key, defaults included, with its help
  // as a comment); it parses back to the same settings.
  std::string effective_toml() const;

  // Keys read through get(), for tests and diagnostics.
  const std::set<std::string>& keys_read() const noexcept { return read_; }

private:
  Deck();
  const DeckKey& declared(std::string_view key) const;
  DeckValue value_of(const DeckKey& k) const;

  std::unique_ptr<toml::table> root_;
  std::string source_;
  std::map<std::string, std::string, std::less<>> override_origin_; // key -> "--set"
  DeckSchema schema_;
  bool validated_ = false;
  mutable std::set<std::string> read_;
  struct Problem {
    std::string key, text;
    std::size_t order; // the line in the deck file; --set and keys without a line come last
  };
  mutable std::vector<Problem> problems_;
};

// Formats one value as TOML ("f64", 1000, 0.5, true, ["sum", "max"]).
std::string toml_literal(const DeckValue& v);

} // namespace tessera::app

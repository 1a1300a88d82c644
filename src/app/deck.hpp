// Input decks: TOML files (or the embedded default) plus `--set key=value` overrides, checked
// against the schema of their job kind. Every key a job reads is declared in a DeckSchema with
// its type, default and a one-line help, so that
//   - unknown keys and wrong types are errors naming the key, the file and the line,
//   - `tessera check` and every output file show the complete effective deck (defaults too).
//
//   DeckSchema s;
//   s.add("matrix.rows", std::int64_t{1000}, "rows of the generated matrix");
//   Deck deck = Deck::from_file("job.toml");
//   deck.apply_override("matrix.rows=4000");
//   deck.validate(s);                        // throws InputError naming key, file and line
//   auto rows = deck.get<std::int64_t>("matrix.rows");
//   if (rows <= 0) deck.fail("matrix.rows", "must be positive, got {}", rows);
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
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

struct DeckKey {
  std::string key;                  // dotted: "matrix.rows"
  DeckValue value;                  // the default; its alternative is the key's type
  std::string help;                 // one line, printed as a comment by effective_toml()
  std::vector<std::string> choices; // allowed strings, also for list items (empty: any)
  std::optional<double> min, max;   // allowed range of numbers (inclusive)
};

// The keys a job kind accepts, in the order effective_toml() prints them.
class DeckSchema {
public:
  void add(std::string key, std::int64_t def, std::string help);
  void add(std::string key, int def, std::string help) {
    add(std::move(key), std::int64_t{def}, std::move(help));
  }
  // With an allowed range [min, max] (inclusive).
  void add(std::string key, std::int64_t def, std::string help, std::int64_t min,
           std::int64_t max = INT64_MAX);
  void add(std::string key, double def, std::string help);
  void add(std::string key, double def, std::string help, double min, double max = HUGE_VAL);
  void add(std::string key, bool def, std::string help);
  void add(std::string key, const char* def, std::string help);
  void add(std::string key, std::string def, std::string help,
           std::vector<std::string> choices = {});
  void add(std::string key, std::vector<std::string> def, std::string help,
           std::vector<std::string> choices = {});

  const DeckKey* find(std::string_view key) const noexcept;
  const std::vector<DeckKey>& keys() const noexcept { return keys_; }

private:
  void add_key(DeckKey k);
  std::vector<DeckKey> keys_;
};

class Deck {
public:
  // Parses a TOML file; malformed TOML throws InputError "FILE:LINE:COL: <parser message>",
  // a missing or unreadable file an InputError naming it.
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

  // Checks every key against the schema: unknown keys and wrong types throw InputError naming
  // the key, the file (or --set) and the line. Integers are accepted for floating-point keys,
  // and a comma-separated string for lists of strings. Must be called before get().
  void validate(const DeckSchema& schema);

  // The value of a declared key (the deck's, else the schema default). T is std::int64_t,
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
};

// Formats one value as TOML ("f64", 1000, 0.5, true, ["sum", "max"]).
std::string toml_literal(const DeckValue& v);

} // namespace tessera::app

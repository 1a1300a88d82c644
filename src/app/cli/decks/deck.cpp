// Deck loading, overrides and access (the schema: deck_schema.cpp; the checks against it:
// deck_check.cpp; the effective-deck printer: deck_print.cpp).
#include "cli/decks/deck.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/decks/deck_internal.hpp"
#include "cli/decks/deck_scan.hpp"
#include "core/throw.hpp"

namespace tessera::app {

namespace {
constexpr std::string_view kDefaultSource = "(embedded default deck)";
constexpr std::string_view kOverrideSource = "--set";
} // namespace

using namespace deck_internal;

// ---- Deck: loading -------------------------------------------------------------------------

Deck::Deck() : root_(std::make_unique<toml::table>()) {}
Deck::Deck(Deck&&) noexcept = default;
Deck& Deck::operator=(Deck&&) noexcept = default;
Deck::~Deck() = default;

Deck Deck::from_string(std::string_view text, std::string source_name) {
  Deck d;
  d.source_ = source_name;
  check_nesting(text, d.source_, kMaxDeckNesting);
  try {
    *d.root_ = toml::parse(text, std::move(source_name));
  } catch (const toml::parse_error& e) {
    TESSERA_THROW(InputError, "{}:{}:{}: malformed TOML: {}", d.source_, e.source().begin.line,
                  e.source().begin.column, e.description());
  }
  return d;
}

Deck Deck::from_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    TESSERA_THROW(InputError, "deck file '{}' not found", path);
  if (fs::is_directory(path, ec))
    TESSERA_THROW(InputError, "deck '{}' is a directory, expected a TOML file", path);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in)
    TESSERA_THROW(InputError, "cannot read deck file '{}'", path);
  return from_string(text.str(), path);
}

Deck Deck::from_default() {
  return from_string(embedded_default_deck(), std::string(kDefaultSource));
}

void Deck::apply_override(std::string_view assignment) {
  const auto eq = assignment.find('=');
  const std::string key = trim(assignment.substr(0, eq == std::string_view::npos ? 0 : eq));
  if (eq == std::string_view::npos || key.empty())
    TESSERA_THROW(InputError, "--set '{}': expected key=value (for example matrix.rows=2000)",
                  assignment);
  const std::string text = trim(assignment.substr(eq + 1));

  // A TOML value when it parses as one, else the text as a string (--set matrix.dtype=f32).
  toml::table parsed;
  bool is_toml = false;
  try {
    parsed = toml::parse("v = " + text, std::string(kOverrideSource));
    is_toml = parsed.size() == 1 && parsed.contains("v");
  } catch (const toml::parse_error&) {
  }

  const auto parts = split_key(key);
  toml::table* t = root_.get();
  std::string prefix;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i].empty())
      TESSERA_THROW(InputError, "--set '{}': malformed key '{}'", assignment, key);
    prefix += (prefix.empty() ? "" : ".") + parts[i];
    toml::node* n = t->get(parts[i]);
    if (!n)
      n = t->insert(parts[i], toml::table{}).first->second.as_table();
    if (!n->is_table())
      TESSERA_THROW(InputError, "--set '{}': '{}' is {}, not a table", assignment, prefix,
                    type_description(*n));
    t = n->as_table();
  }
  if (parts.back().empty())
    TESSERA_THROW(InputError, "--set '{}': malformed key '{}'", assignment, key);
  if (is_toml)
    t->insert_or_assign(parts.back(), std::move(*parsed.get("v")));
  else
    t->insert_or_assign(parts.back(), text);
  override_origin_[key] = std::string(kOverrideSource);
}

std::string Deck::peek_string(std::string_view key, std::string_view def) const {
  const toml::node* n = find_node(*root_, key);
  if (!n)
    return std::string(def);
  if (!n->is_string())
    fail_message(key, fmt::format("expected a string, got {}", type_description(*n)));
  return n->as_string()->get();
}

// ---- Deck: access --------------------------------------------------------------------------

const DeckKey& Deck::declared(std::string_view key) const {
  if (!validated_)
    TESSERA_THROW(InternalError, "deck read before validation (key '{}')", key);
  const DeckKey* k = schema_.find(key);
  if (!k)
    TESSERA_THROW(InternalError, "deck key '{}' is read but not declared in the schema", key);
  return *k;
}

DeckValue Deck::value_of(const DeckKey& k) const {
  const toml::node* n = find_node(*root_, k.key);
  if (!n)
    return k.value;
  // A value of the wrong type (a problem check() recorded) reads as the default.
  switch (k.value.index()) {
  case 0:
    if (n->is_integer())
      return n->as_integer()->get();
    break;
  case 1:
    if (n->is_integer())
      return static_cast<double>(n->as_integer()->get());
    if (n->is_floating_point())
      return n->as_floating_point()->get();
    break;
  case 2:
    if (n->is_boolean())
      return n->as_boolean()->get();
    break;
  case 3:
    if (n->is_string())
      return n->as_string()->get();
    break;
  default:
    if (n->is_string())
      return split_list(n->as_string()->get());
    if (const toml::array* a = n->as_array()) {
      std::vector<std::string> v;
      for (const auto& item : *a) {
        if (!item.is_string())
          return k.value;
        v.push_back(item.as_string()->get());
      }
      return v;
    }
  }
  return k.value;
}

template <class T>
T Deck::get(std::string_view key) const {
  const DeckKey& k = declared(key);
  if (!std::holds_alternative<T>(k.value))
    TESSERA_THROW(InternalError, "deck key '{}' is declared as {}, read with another type", key,
                  expected_description(k.value));
  read_.insert(k.key);
  return std::get<T>(value_of(k));
}

template std::int64_t Deck::get<std::int64_t>(std::string_view) const;
template double Deck::get<double>(std::string_view) const;
template bool Deck::get<bool>(std::string_view) const;
template std::string Deck::get<std::string>(std::string_view) const;
template std::vector<std::string> Deck::get<std::vector<std::string>>(std::string_view) const;

bool Deck::has(std::string_view key) const {
  return find_node(*root_, key) != nullptr;
}

std::string Deck::where(std::string_view key) const {
  if (override_origin_.count(key))
    return std::string(kOverrideSource);
  // A key may also be inside a table given with --set (a.b = {c = 1}).
  for (const auto& [k, origin] : override_origin_)
    if (key.rfind(k + ".", 0) == 0)
      return origin;
  if (const toml::node* n = find_node(*root_, key); n && n->source().begin.line > 0)
    return fmt::format("{}:{}", source_, n->source().begin.line);
  // A table that only --set created (--set solver.x=1).
  for (const auto& [k, origin] : override_origin_)
    if (k.size() > key.size() && k.compare(0, key.size(), key) == 0 && k[key.size()] == '.')
      return origin;
  return source_;
}

void Deck::fail_message(std::string_view key, const std::string& message) const {
  TESSERA_THROW(InputError, "{}: {}: {}", where(key), key, message);
}

} // namespace tessera::app

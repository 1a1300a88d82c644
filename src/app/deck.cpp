// Deck loading, overrides, access and the effective-deck printer (the checks against a schema:
// deck_check.cpp).
#include "app/deck.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/deck_internal.hpp"
#include "app/deck_scan.hpp"
#include "core/throw.hpp"

namespace tessera::app {

namespace {
constexpr std::string_view kDefaultSource = "(embedded default deck)";
constexpr std::string_view kOverrideSource = "--set";
} // namespace

namespace deck_internal {

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot - start));
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  return parts;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos)
    return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto comma = s.find(',', start);
    if (comma == std::string_view::npos)
      comma = s.size();
    if (auto item = trim(s.substr(start, comma - start)); !item.empty())
      out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

const toml::node* find_node(const toml::table& root, std::string_view key) {
  const toml::table* t = &root;
  const auto parts = split_key(key);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const toml::node* n = t->get(parts[i]);
    if (!n)
      return nullptr;
    if (i + 1 == parts.size())
      return n;
    t = n->as_table();
    if (!t)
      return nullptr;
  }
  return nullptr;
}

const char* type_description(const toml::node& n) {
  switch (n.type()) {
  case toml::node_type::table:
    return "a table";
  case toml::node_type::array:
    return "an array";
  case toml::node_type::string:
    return "a string";
  case toml::node_type::integer:
    return "an integer";
  case toml::node_type::floating_point:
    return "a floating-point number";
  case toml::node_type::boolean:
    return "a boolean";
  default:
    return "a date or time";
  }
}

const char* expected_description(const DeckValue& v) {
  switch (v.index()) {
  case 0:
    return "an integer";
  case 1:
    return "a number";
  case 2:
    return "a boolean (true or false)";
  case 3:
    return "a string";
  default:
    return "a list of strings";
  }
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty())
      out += sep;
    out += s;
  }
  return out;
}

std::string leaf_of(std::string_view key) {
  const auto dot = key.rfind('.');
  return std::string(dot == std::string_view::npos ? key : key.substr(dot + 1));
}

std::string parent_of(std::string_view key) {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? std::string() : std::string(key.substr(0, dot));
}

std::string number_text(double v) {
  return fmt::format("{}", v);
}

} // namespace deck_internal

using namespace deck_internal;

namespace {

std::string toml_quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
      else
        out += c;
    }
  }
  return out + "\"";
}

} // namespace

std::string toml_literal(const DeckValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(x))
            return "nan";
          if (std::isinf(x))
            return x < 0 ? "-inf" : "inf";
          std::string s = fmt::format("{}", x);
          if (s.find_first_of(".eE") == std::string::npos)
            s += ".0";
          return s;
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return toml_quoted(x);
        } else {
          std::string out = "[";
          for (std::size_t i = 0; i < x.size(); ++i)
            out += (i ? ", " : "") + toml_quoted(x[i]);
          return out + "]";
        }
      },
      v);
}

// ---- DeckSchema ----------------------------------------------------------------------------

namespace {
DeckKey make_key(std::string key, DeckValue def, std::string help,
                 std::vector<std::string> choices) {
  DeckKey k;
  k.key = std::move(key);
  k.value = std::move(def);
  k.help = std::move(help);
  k.choices = std::move(choices);
  return k;
}
} // namespace

DeckKey& DeckSchema::add_key(DeckKey k) {
  if (find(k.key))
    TESSERA_THROW(InternalError, "deck key '{}' declared twice", k.key);
  keys_.push_back(std::move(k));
  return keys_.back();
}
DeckKey& DeckSchema::add(std::string key, std::int64_t def, std::string help) {
  return add_key(make_key(std::move(key), def, std::move(help), {}));
}
DeckKey& DeckSchema::add(std::string key, std::int64_t def, std::string help, std::int64_t min,
                         std::int64_t max) {
  DeckKey k = make_key(std::move(key), def, std::move(help), {});
  k.min = double(min);
  if (max != INT64_MAX)
    k.max = double(max);
  return add_key(std::move(k));
}
DeckKey& DeckSchema::add(std::string key, double def, std::string help) {
  return add_key(make_key(std::move(key), def, std::move(help), {}));
}
DeckKey& DeckSchema::add(std::string key, double def, std::string help, double min, double max) {
  DeckKey k = make_key(std::move(key), def, std::move(help), {});
  k.min = min;
  if (max != HUGE_VAL)
    k.max = max;
  return add_key(std::move(k));
}
DeckKey& DeckSchema::add(std::string key, bool def, std::string help) {
  return add_key(make_key(std::move(key), def, std::move(help), {}));
}
DeckKey& DeckSchema::add(std::string key, const char* def, std::string help) {
  return add_key(make_key(std::move(key), std::string(def), std::move(help), {}));
}
DeckKey& DeckSchema::add(std::string key, std::string def, std::string help,
                         std::vector<std::string> choices) {
  return add_key(make_key(std::move(key), std::move(def), std::move(help), std::move(choices)));
}
DeckKey& DeckSchema::add(std::string key, std::vector<std::string> def, std::string help,
                         std::vector<std::string> choices) {
  return add_key(make_key(std::move(key), std::move(def), std::move(help), std::move(choices)));
}

bool DeckSchema::has_table(std::string_view prefix) const noexcept {
  for (const auto& k : keys_)
    if (k.key.size() > prefix.size() && k.key.compare(0, prefix.size(), prefix) == 0 &&
        k.key[prefix.size()] == '.')
      return true;
  return false;
}

const DeckKey* DeckSchema::find(std::string_view key) const noexcept {
  for (const auto& k : keys_)
    if (k.key == key)
      return &k;
  return nullptr;
}

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

std::string Deck::effective_toml() const {
  std::string out =
      fmt::format("# Effective settings of deck {} (every key, defaults included)\n", source_);
  // Group keys by their table, in order of first appearance; top-level keys come first
  // because TOML puts them before any [table] header.
  std::vector<std::string> tables;
  std::map<std::string, std::vector<const DeckKey*>> by_table;
  for (const auto& k : schema_.keys()) {
    const auto dot = k.key.rfind('.');
    const std::string parent = dot == std::string::npos ? "" : k.key.substr(0, dot);
    if (!by_table.count(parent))
      tables.push_back(parent);
    by_table[parent].push_back(&k);
  }
  std::stable_partition(tables.begin(), tables.end(),
                        [](const std::string& t) { return t.empty(); });
  for (const auto& t : tables) {
    if (!t.empty())
      out += fmt::format("\n[{}]\n", t);
    for (const DeckKey* k : by_table[t]) {
      const auto dot = k->key.rfind('.');
      const std::string name = dot == std::string::npos ? k->key : k->key.substr(dot + 1);
      const std::string line = fmt::format("{} = {}", name, toml_literal(value_of(*k)));
      if (k->help.empty())
        out += line + "\n";
      else
        out += fmt::format("{:<34} # {}\n", line, k->help);
    }
  }
  return out;
}

} // namespace tessera::app

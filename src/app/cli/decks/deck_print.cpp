// Decks as TOML text: values as literals and the effective deck (every key, defaults included).
#include <toml++/toml.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cli/decks/deck.hpp"

namespace tessera::app {

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

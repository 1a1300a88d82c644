// The helpers the deck sources share (deck_internal.hpp).
#include "cli/decks/deck_internal.hpp"

#include <toml++/toml.h>

#include <fmt/format.h>

namespace tessera::app {

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

} // namespace tessera::app

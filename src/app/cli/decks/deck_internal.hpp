// Helpers the deck sources share (deck.cpp, deck_check.cpp); not for other code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/decks/deck.hpp"

namespace toml {
inline namespace v3 {
class node;
}
} // namespace toml

namespace tessera::app::deck_internal {

// "a.b.c" → {"a", "b", "c"}; "a.b" → leaf "b", parent "a" ("" for a top-level key).
std::vector<std::string> split_key(std::string_view key);
std::string leaf_of(std::string_view key);
std::string parent_of(std::string_view key);
std::string trim(std::string_view s);
// "sum, max" → {"sum", "max"} (empty items dropped).
std::vector<std::string> split_list(std::string_view s);
std::string join(const std::vector<std::string>& v, std::string_view sep);
// The node of a dotted key, nullptr when the deck has none.
const toml::node* find_node(const toml::table& root, std::string_view key);
// "an integer", "a string", … of a TOML node, and what a key of the type of `v` expects.
const char* type_description(const toml::node& n);
const char* expected_description(const DeckValue& v);
// A number as messages show it: 1, 0.5, 1e-300.
std::string number_text(double v);

} // namespace tessera::app::deck_internal

// Checking a deck against its schema (Deck::check), the problems it records, and the "did you
// mean" of unknown names.
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cli/decks/deck.hpp"
#include "cli/decks/deck_internal.hpp"
#include "core/throw.hpp"

namespace tessera::app {

using namespace deck_internal;

namespace {

// Edit distance with adjacent transpositions counting as one edit (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

} // namespace

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  // Up to one edit in short words, two in longer ones: "rowz" → "rows", "alpah" → "alpha".
  const std::size_t allowed = word.size() <= 4 ? 1 : 2;
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance && d < std::max(word.size(), c.size())) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}
// ---- Deck: validation ----------------------------------------------------------------------

namespace {

// What is wrong with a value of a declared key ("" when nothing is), for check().
std::string value_problem(const DeckKey& decl, const toml::node& node) {
  const auto wrong = [&] {
    return fmt::format("expected {}, got {}", expected_description(decl.value),
                       type_description(node));
  };
  const auto range = [&](double v, const std::string& text) -> std::string {
    if (decl.min && (decl.min_exclusive ? !(v > *decl.min) : !(v >= *decl.min)))
      return fmt::format("must be {} {}, got {}", decl.min_exclusive ? "greater than" : "at least",
                         number_text(*decl.min), text);
    if (decl.max && !(v <= *decl.max))
      return fmt::format("must be at most {}, got {}", number_text(*decl.max), text);
    return {};
  };
  const auto choice = [&](const std::string& v) -> std::string {
    if (decl.choices.empty() ||
        std::find(decl.choices.begin(), decl.choices.end(), v) != decl.choices.end())
      return {};
    std::string m = fmt::format("'{}' is not one of {}", v, join(decl.choices, ", "));
    if (const auto near = closest_match(v, decl.choices))
      m += fmt::format(" (did you mean '{}'?)", *near);
    return m;
  };
  const auto items = [&](const std::vector<std::string>& list) -> std::string {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (auto m = choice(list[i]); !m.empty())
        return m;
      if (decl.distinct && std::find(list.begin(), list.begin() + std::ptrdiff_t(i), list[i]) !=
                               list.begin() + std::ptrdiff_t(i))
        return fmt::format("lists '{}' twice; each item may appear once", list[i]);
    }
    return {};
  };
  std::string m;
  switch (decl.value.index()) {
  case 0:
    if (!node.is_integer())
      return wrong();
    m = range(double(node.as_integer()->get()), std::to_string(node.as_integer()->get()));
    break;
  case 1: {
    if (!node.is_number())
      return wrong();
    const double v =
        node.is_integer() ? double(node.as_integer()->get()) : node.as_floating_point()->get();
    if (!std::isfinite(v))
      return fmt::format("must be a finite number, got {}", toml_literal(v));
    m = range(v, number_text(v));
    break;
  }
  case 2:
    if (!node.is_boolean())
      return wrong();
    break;
  case 3:
    if (!node.is_string())
      return wrong();
    m = choice(node.as_string()->get());
    break;
  default:
    if (node.is_string()) {
      m = items(split_list(node.as_string()->get()));
      break;
    }
    if (!node.is_array())
      return wrong();
    {
      std::vector<std::string> list;
      for (const auto& item : *node.as_array()) {
        if (!item.is_string())
          return fmt::format("expected a list of strings, got an array holding {}",
                             type_description(item));
        list.push_back(item.as_string()->get());
      }
      m = items(list);
    }
  }
  return m;
}

// "unknown key" with the closest declared key when the name looks like a typo of one, and the
// keys known next to it.
std::string unknown_key_message(const DeckSchema& schema, const std::string& path,
                                const std::string& prefix) {
  std::vector<std::string> all, siblings;
  for (const auto& d : schema.keys()) {
    all.push_back(d.key);
    if (parent_of(d.key) == prefix)
      siblings.push_back(leaf_of(d.key));
  }
  std::optional<std::string> near = closest_match(path, all);
  if (!near) // the right name in the wrong table: rows at the top instead of matrix.rows
    for (const auto& d : schema.keys())
      if (leaf_of(d.key) == leaf_of(path)) {
        near = d.key;
        break;
      }
  std::string m = "unknown key";
  if (near)
    m += fmt::format("; did you mean {}?", *near);
  if (!siblings.empty())
    m += fmt::format(" (known keys{}: {})", prefix.empty() ? "" : " in [" + prefix + "]",
                     join(siblings, ", "));
  return m;
}

std::string unknown_table_message(const DeckSchema& schema, const std::string& path) {
  std::vector<std::string> tables;
  for (const auto& d : schema.keys())
    for (std::string t = parent_of(d.key); !t.empty(); t = parent_of(t))
      if (std::find(tables.begin(), tables.end(), t) == tables.end())
        tables.push_back(t);
  std::string m = fmt::format("unknown table [{}]", path);
  if (const auto near = closest_match(path, tables))
    m += fmt::format("; did you mean [{}]?", *near);
  return m;
}

} // namespace

void Deck::check(const DeckSchema& schema) {
  schema_ = schema;
  // Walks the deck: every leaf must be a declared key of the right type; tables must be
  // prefixes of declared keys.
  auto walk = [&](auto& self, const toml::table& t, const std::string& prefix) -> void {
    for (auto&& [k, node] : t) {
      const std::string path =
          prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      const DeckKey* decl = schema_.find(path);
      if (node.is_table() && !decl) {
        if (schema_.has_table(path))
          self(self, *node.as_table(), path);
        else
          problem(path, unknown_table_message(schema_, path));
        continue;
      }
      if (!decl) {
        problem(path, unknown_key_message(schema_, path, prefix));
        continue;
      }
      std::string m = value_problem(*decl, node);
      if (m.empty() && decl->check)
        m = decl->check(value_of(*decl));
      if (!m.empty())
        problem(path, std::move(m));
    }
  };
  walk(walk, *root_, "");
  validated_ = true;
}

void Deck::validate(const DeckSchema& schema) {
  check(schema);
  throw_problems();
}

void Deck::problem(std::string_view key, std::string message) const {
  if (has_problem(key))
    return;
  std::size_t order = SIZE_MAX;
  if (!override_origin_.count(key))
    if (const toml::node* n = find_node(*root_, key); n && n->source().begin.line > 0)
      order = n->source().begin.line;
  problems_.push_back(
      {std::string(key), fmt::format("{}: {}: {}", where(key), key, message), order});
}

bool Deck::has_problem(std::string_view key) const {
  return std::any_of(problems_.begin(), problems_.end(),
                     [&](const Problem& p) { return p.key == key; });
}

void Deck::throw_problems() const {
  if (problems_.empty())
    return;
  if (problems_.size() == 1)
    TESSERA_THROW(InputError, "{}", problems_[0].text);
  std::vector<Problem> sorted = problems_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Problem& a, const Problem& b) { return a.order < b.order; });
  std::string m = fmt::format("{}: {} problems:", source_, sorted.size());
  for (const auto& p : sorted)
    m += "\n  " + p.text;
  TESSERA_THROW(InputError, "{}", m);
}

std::vector<std::string> Deck::keys_set() const {
  std::vector<std::string> out;
  auto walk = [&](auto& self, const toml::table& t, const std::string& prefix) -> void {
    for (auto&& [k, node] : t) {
      const std::string path =
          prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      if (node.is_table())
        self(self, *node.as_table(), path);
      else
        out.push_back(path);
    }
  };
  walk(walk, *root_, "");
  return out;
}

} // namespace tessera::app

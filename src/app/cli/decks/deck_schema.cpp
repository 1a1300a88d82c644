// DeckSchema: the keys a job kind takes, their defaults, help and ranges (app/decks/deck.hpp).
#include <algorithm>

#include "cli/decks/deck.hpp"
#include "core/throw.hpp"

namespace tessera::app {

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

} // namespace tessera::app

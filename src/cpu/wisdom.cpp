#include "cpu/wisdom.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/log.hpp"
#include "cpu/transpose_kernel.hpp"

namespace tessera::cpu::detail {

namespace {

constexpr const char* kMagic = "tessera-wisdom 1";

std::string version_line() {
  return std::string("tessera ") + TESSERA_VERSION;
}

std::string cpu_line() {
  return "cpu " + processor_fingerprint();
}

} // namespace

std::string default_wisdom_cache() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/tessera/wisdom";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/')
    return std::string(home) + "/.cache/tessera/wisdom";
  return {};
}

std::string processor_fingerprint() {
  std::string model = "unknown processor";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        model = line.substr(colon + 1);
        model.erase(0, model.find_first_not_of(" \t"));
      }
      break;
    }
  std::string isas;
  if (isa_supported(Isa::Avx2))
    isas += " avx2";
  if (isa_supported(Isa::Avx512))
    isas += " avx512f";
  return model + " |" + (isas.empty() ? std::string(" portable") : isas);
}

std::optional<std::map<TransposeKey, std::string>> WisdomFile::read(std::string& why) const {
  std::ifstream in(path_);
  std::map<TransposeKey, std::string> entries;
  if (!in)
    return entries; // no file yet
  std::string line;
  if (!std::getline(in, line) || line != kMagic) {
    why = "it is not a tessera wisdom file";
    return std::nullopt;
  }
  if (!std::getline(in, line) || line != version_line()) {
    why = "it was written by another tessera version (" + line + ")";
    return std::nullopt;
  }
  if (!std::getline(in, line) || line != cpu_line()) {
    why = "it was measured on another kind of processor (" + line + ")";
    return std::nullopt;
  }
  for (int number = 4; std::getline(in, line); ++number) {
    if (line.empty())
      continue;
    std::istringstream fields(line);
    std::string what, kernel, extra;
    TransposeKey key{};
    fields >> what >> key.element_size >> key.threads >> key.rows >> key.cols >> key.ld_in >>
        key.ld_out >> kernel;
    const auto parsed = parse_kernel_name(kernel);
    if (!fields || (fields >> extra) || what != "transpose" || !parsed ||
        !isa_supported(parsed->isa) || key.threads < 1 || key.rows < 1 || key.cols < 1) {
      why = "line " + std::to_string(number) + " is damaged";
      return std::nullopt;
    }
    entries[key] = kernel;
  }
  return entries;
}

std::map<TransposeKey, std::string> WisdomFile::load() {
  std::string why;
  auto entries = read(why);
  if (!entries && kind_ == Kind::Cache) {
    // A cache from another version or processor, or damaged: start it anew.
    log::debug("wisdom cache {} is replaced: {}", path_, why);
    state_ = State::Replace;
    return {};
  }
  if (!entries) {
    if (state_ != State::Ignored)
      log::warn("wisdom file {} is ignored: {}; remove it to measure and save new wisdom", path_,
                why);
    state_ = State::Ignored;
    return {};
  }
  state_ = State::Usable;
  return *entries;
}

void WisdomFile::store(const TransposeKey& key, const std::string& kernel) {
  if (state_ == State::Unread)
    load();
  if (state_ != State::Usable && state_ != State::Replace)
    return;
  const bool cache = kind_ == Kind::Cache;
  // A failure to save is a warning for a file the user named, a debug line for the cache.
  const auto failed = [&](const std::string& what) {
    if (cache)
      log::debug("{}", what);
    else
      log::warn("{}", what);
  };
  std::string why;
  auto entries = read(why); // entries other processes may have added meanwhile
  if (!entries && state_ == State::Replace)
    entries.emplace();
  if (!entries) {
    failed(fmt::format("wisdom file {} is not updated: {}", path_, why));
    state_ = State::Ignored;
    return;
  }
  (*entries)[key] = kernel;
  if (cache) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  }
  char host[64] = {};
  (void)::gethostname(host, sizeof host - 1);
  // Ranks of several nodes may share a home: the temporary is unique to host and process.
  const std::string tmp = path_ + ".tmp." + host + "." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kMagic << '\n' << version_line() << '\n' << cpu_line() << '\n';
    for (const auto& [k, name] : *entries)
      out << "transpose " << k.element_size << ' ' << k.threads << ' ' << k.rows << ' ' << k.cols
          << ' ' << k.ld_in << ' ' << k.ld_out << ' ' << name << '\n';
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      failed(fmt::format("cannot write wisdom file {}: the kernel choice is not saved", path_));
      return;
    }
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::remove(tmp.c_str());
    failed(fmt::format("cannot replace wisdom file {}: the kernel choice is not saved", path_));
    return;
  }
  state_ = State::Usable;
}

} // namespace tessera::cpu::detail

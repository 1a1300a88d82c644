// Size and modification-time checks of an input file between chunks (see input_watch.hpp).
#include "io/input_watch.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/throw.hpp"

namespace tessera::io::detail {

namespace {

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

} // namespace

InputWatch::InputWatch(std::string path) : path_(std::move(path)) {
  if (::stat(path_.c_str(), &first_) != 0)
    TESSERA_THROW(IoError, "cannot stat the input '{}': {}", path_, std::strerror(errno));
}

void InputWatch::check(const std::string& when) const {
  struct stat now {};
  if (::stat(path_.c_str(), &now) != 0)
    TESSERA_THROW(IoError,
                  "the input '{}' disappeared while it was being read ({}: {}); the run stops "
                  "without a result",
                  path_, when, std::strerror(errno));
  const char* what = nullptr;
  if (now.st_dev != first_.st_dev || now.st_ino != first_.st_ino)
    what = "it was replaced by another file";
  else if (now.st_size != first_.st_size)
    what = now.st_size < first_.st_size ? "it was truncated" : "it grew";
  else if (!same_time(now.st_mtim, first_.st_mtim))
    what = "it was modified";
  if (!what)
    return;
  TESSERA_THROW(IoError,
                "the input '{}' changed while it was being read ({}: {}; size {} -> {} bytes): "
                "what was read would mix old and new contents (or zeros past the new end), so "
                "the run stops without a result; run it again once nothing writes to the input",
                path_, when, what, static_cast<long long>(first_.st_size),
                static_cast<long long>(now.st_size));
}

} // namespace tessera::io::detail

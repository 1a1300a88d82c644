// Root provenance attributes (see provenance.hpp).
#include "io/provenance.hpp"

#include <hdf5.h>

#include <ctime>

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_error.hpp"
#include "mpi/environment.hpp"

namespace tessera::io {

std::string hdf5_version() {
  detail::ensure_hdf5_ready();
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("{}.{}.{}", major, minor, release);
}

bool hdf5_is_parallel() noexcept {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

std::string mpi_library_version() {
  return mpi::library_version();
}

std::string iso8601_utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

namespace {

// The root's `history` with `line` first: the netCDF convention (NCO's tools do the same), so
// that a file appended to, or made from inputs that had one, keeps what made each part of it.
std::string history_with(const H5File& f, const std::string& line) {
  std::optional<std::string> earlier;
  try {
    earlier = read_string_attribute(f, "/", "history");
  } catch (const InputError&) {
    // Not a string: replaced by tessera's own.
  }
  if (!earlier)
    return line;
  std::string e = *earlier;
  while (!e.empty() && (e.back() == '\0' || e.back() == '\n'))
    e.pop_back();
  return e.empty() ? line : line + "\n" + e;
}

} // namespace

void write_provenance(H5File& f, const Provenance& p) {
  const std::string root = "/";
  const std::string date = iso8601_utc_now();
  write_attribute(f, root, "software", "tessera");
  write_attribute(f, root, "version", TESSERA_VERSION);
  write_attribute(f, root, "git_hash", build_git_hash());
  write_attribute(f, root, "date", date);
  write_attribute(f, root, "history", history_with(f, date + " " + p.command_line));
  write_attribute(f, root, "command_line", p.command_line);
  write_attribute(f, root, "deck", p.deck);
  write_attribute(f, root, "ranks", static_cast<long long>(p.ranks));
  write_attribute(f, root, "threads", static_cast<long long>(p.threads));
  write_attribute(f, root, "backend", p.backend);
  write_attribute(f, root, "gpus", fmt::format("{}", fmt::join(p.gpus, ",")));
  write_attribute(f, root, "mpi_library", mpi_library_version());
  write_attribute(f, root, "hdf5_version", hdf5_version());
  write_attribute(f, root, "hdf5_parallel", hdf5_is_parallel() ? 1LL : 0LL);
  write_attribute(f, root, "hdf5_io", f.parallel() ? "collective" : "serial");
  write_attribute(f, root, "cuda_runtime", cuda::runtime_version());
}

} // namespace tessera::io

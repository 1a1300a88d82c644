// Shared helpers of the HDF5 tests (besides ../mpi_test_support.hpp's rank_of, size_of and
// TempDir): the I/O mode under test (TESSERA_HDF5_IO), reproducible random matrices, and a
// check that an error was raised on every rank.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../mpi_test_support.hpp"
#include "core/error.hpp"

namespace tessera::test {

// Sets TESSERA_HDF5_IO for the lifetime of the object ("" unsets it).
class IoModeScope {
public:
  explicit IoModeScope(const std::string& mode) {
    if (mode.empty())
      ::unsetenv("TESSERA_HDF5_IO");
    else
      ::setenv("TESSERA_HDF5_IO", mode.c_str(), 1);
  }
  ~IoModeScope() { ::unsetenv("TESSERA_HDF5_IO"); }
  IoModeScope(const IoModeScope&) = delete;
  IoModeScope& operator=(const IoModeScope&) = delete;
};

// Test-name suffix for a TESSERA_HDF5_IO value ("" is the default: collective here).
inline std::string mode_name(const testing::TestParamInfo<const char*>& p) {
  return *p.param ? p.param : "collective";
}

// Element (i, j) of a random matrix, computable on any rank without the others.
inline double random_value(std::uint64_t seed, std::int64_t i, std::int64_t j, int part = 0) {
  std::uint64_t z =
      seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>((i * 1000003 + j) * 2 + part + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

template <class T>
T random_element(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(random_value(seed, i, j));
  } else {
    using R = typename T::value_type;
    return T(static_cast<R>(random_value(seed, i, j, 0)),
             static_cast<R>(random_value(seed, i, j, 1)));
  }
}

// Rows [row0, row0 + rows) x columns [col0, col0 + cols) of the random matrix, row-major.
template <class T>
std::vector<T> random_block(std::uint64_t seed, std::int64_t row0, std::int64_t rows,
                            std::int64_t col0, std::int64_t cols) {
  std::vector<T> v(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      v[static_cast<std::size_t>(i * cols + j)] = random_element<T>(seed, row0 + i, col0 + j);
  return v;
}

// Runs fn, which must throw E with a message containing every one of `needles`, on this rank.
// Each rank checks itself; the MPI test main fails the job if any rank failed.
template <class E, class F>
void expect_error(F&& fn, std::initializer_list<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "[rank " << rank_of() << "] expected an exception, none was thrown";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& n : needles)
      EXPECT_NE(what.find(n), std::string::npos)
          << "[rank " << rank_of() << "] message '" << what << "' does not mention '" << n << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[rank " << rank_of() << "] wrong exception type: " << e.what();
  }
}

inline bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// What writing the output `name` may leave beside it: temporaries (NAME.XXXXXX.partial, or the
// NAME.partial of older versions) and the lock NAME.lock. Empty once the file is committed or
// given up.
inline std::vector<std::string> leftovers_of(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path p(name);
  const std::string base = p.filename().string() + ".";
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(p.parent_path().empty() ? fs::path(".") : p.parent_path(), ec),
       end;
       !ec && it != end; it.increment(ec)) {
    const std::string f = it->path().filename().string();
    if (f.compare(0, base.size(), base) == 0 && (f.ends_with(".partial") || f == base + "lock"))
      found.push_back(f);
  }
  return found;
}

} // namespace tessera::test

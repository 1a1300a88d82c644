// Helpers every MPI test binary may share: this rank and the job size, and a temporary
// directory made by rank 0 whose name every rank receives.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tessera::test {

// One fresh seed for the whole job, drawn on rank 0 (the tests print it on failure).
inline std::uint64_t shared_seed() {
  std::uint64_t seed = 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

inline int rank_of(MPI_Comm c = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
inline int size_of(MPI_Comm c = MPI_COMM_WORLD) {
  int s = 1;
  MPI_Comm_size(c, &s);
  return s;
}

// A fresh directory under $TMPDIR (or /tmp) named tessera-PREFIX-XXXXXX, made by rank 0 and
// removed by it at the end (after a barrier). Collective: construct and destroy on every rank.
class TempDir {
public:
  explicit TempDir(const std::string& prefix = "test") {
    std::string name;
    if (rank_of() == 0) {
      const char* base = std::getenv("TMPDIR");
      std::string templ =
          std::string(base && *base ? base : "/tmp") + "/tessera-" + prefix + "-XXXXXX";
      if (::mkdtemp(templ.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed for " + templ);
      name = templ;
    }
    int n = static_cast<int>(name.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    name.resize(static_cast<std::size_t>(n));
    MPI_Bcast(name.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name;
  }
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_of() == 0) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

} // namespace tessera::test

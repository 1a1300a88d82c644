// The cross-rank timing table: max time, imbalance, GB/s and phases present on some ranks only.
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mpi/timing_table.hpp"

namespace {

int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

std::vector<std::string> split_ws(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> v;
  for (std::string w; is >> w;)
    v.push_back(w);
  return v;
}

// The row of `phase` in the table, split into columns; empty when absent.
std::vector<std::string> row_of(const std::string& table, const std::string& phase) {
  std::istringstream is(table);
  for (std::string line; std::getline(is, line);) {
    auto cols = split_ws(line);
    if (!cols.empty() && cols[0] == phase)
      return cols;
  }
  return {};
}

TEST(TimingTable, MaxTimeImbalanceAndRate) {
  const int rank = rank_of(), size = size_of();
  unsigned seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> t(static_cast<std::size_t>(size));
  for (auto& x : t)
    x = u(gen);

  tessera::PhaseTimers timers;
  timers.add("exchange", t[rank], 1e9);
  timers.add("exchange", t[rank], 1e9);
  if (rank == size - 1)
    timers.add("only_last", 0.25);
  const std::string table = tessera::mpi::timing_table(timers, MPI_COMM_WORLD);
  if (rank != 0) {
    EXPECT_TRUE(table.empty());
    return;
  }
  SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + table);
  double tmax = 0, tmin = 1e300;
  for (double x : t) {
    tmax = std::max(tmax, 2 * x);
    tmin = std::min(tmin, 2 * x);
  }
  const auto header = split_ws(table.substr(0, table.find('\n')));
  ASSERT_GE(header.size(), 5u);
  EXPECT_EQ(header[0], "phase");

  const auto ex = row_of(table, "exchange");
  ASSERT_EQ(ex.size(), 5u);
  EXPECT_EQ(ex[1], "2");
  EXPECT_NEAR(std::stod(ex[2]), tmax, 1e-6);
  EXPECT_NEAR(std::stod(ex[3]), tmax / tmin, 0.01);
  EXPECT_NEAR(std::stod(ex[4]), 2.0 * size / tmax, 0.01); // 2 GB per rank

  const auto only = row_of(table, "only_last");
  ASSERT_EQ(only.size(), 5u);
  EXPECT_EQ(only[1], "1");
  EXPECT_NEAR(std::stod(only[2]), 0.25, 1e-9);
  EXPECT_EQ(only[3], size > 1 ? "inf" : "1.00");
  EXPECT_EQ(only[4], "-");
}

TEST(TimingTable, NoPhasesGivesOnlyTheHeader) {
  tessera::PhaseTimers timers;
  const std::string table = tessera::mpi::timing_table(timers, MPI_COMM_WORLD);
  if (rank_of() == 0) {
    EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 1);
  }
}

} // namespace

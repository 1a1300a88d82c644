// One rank's bad arguments to a plan's execute() raise on every rank, naming that rank, instead
// of leaving the others waiting in the exchange (before, they hung until ctest's timeout).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/throw.hpp"
#include "mpi/reduce_plan.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera {
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

// Runs `call`, which must throw InputError on every rank: the bad rank's own message
// (`own`), the others one naming the bad rank.
template <class F>
void expect_raised_everywhere(int bad, const std::string& own, F&& call) {
  try {
    call();
    ADD_FAILURE() << "no error on rank " << rank_of() << " (bad rank " << bad << ")";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(own), std::string::npos) << what;
    if (rank_of() != bad) {
      EXPECT_NE(what.find("rank " + std::to_string(bad) + ": "), std::string::npos) << what;
    }
  }
}

TEST(PlanArguments, WrongElementTypeOnTheLastRank) {
  const int bad = size_of() - 1;
  const BlockDistribution dist({13, 7}, size_of());
  TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu);
  std::vector<double> in(static_cast<std::size_t>(dist.rows(rank_of()) * 7) + 1, 1.0);
  std::vector<double> out(static_cast<std::size_t>(dist.transposed().rows(rank_of()) * 13) + 1);
  std::vector<float> in32(in.size()), out32(out.size());
  expect_raised_everywhere(bad, "built for f64 data but execute() got f32", [&] {
    if (rank_of() == bad)
      plan.execute(in32.data(), out32.data());
    else
      plan.execute(in.data(), out.data());
  });
  // Nobody is left inside the exchange: the plan still works.
  EXPECT_NO_THROW(plan.execute(in.data(), out.data()));
}

TEST(PlanArguments, NullBlockOnTheFirstRank) {
  const BlockDistribution dist({13, 7}, size_of());
  TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu);
  std::vector<double> in(static_cast<std::size_t>(dist.rows(rank_of()) * 7) + 1, 1.0);
  std::vector<double> out(static_cast<std::size_t>(dist.transposed().rows(rank_of()) * 13) + 1);
  expect_raised_everywhere(0, "execute() got a null input block",
                           [&] { plan.execute(rank_of() == 0 ? nullptr : in.data(), out.data()); });

  ReducePlan reduce(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu, {Op::Sum}, Axis::All);
  expect_raised_everywhere(0, "execute() got a null block",
                           [&] { (void)reduce.execute(rank_of() == 0 ? nullptr : in.data()); });
  EXPECT_NO_THROW((void)reduce.execute(in.data()));
}

} // namespace
} // namespace tessera

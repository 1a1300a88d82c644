#include "core/block_distribution.hpp"

#include "core/throw.hpp"

namespace tessera {

BlockDistribution::BlockDistribution(Shape global, int nranks) : global_(global), nranks_(nranks) {
  TESSERA_REQUIRE(nranks > 0, InputError, "a distribution needs at least one rank, got {}", nranks);
  TESSERA_REQUIRE(global.rows >= 0 && global.cols >= 0, InputError,
                  "matrix dimensions must not be negative, got {}", global.str());
  base_ = global.rows / nranks;
  extra_ = global.rows % nranks;
}

int BlockDistribution::owner(std::int64_t row) const noexcept {
  // The first extra_ ranks hold base_+1 rows each.
  const std::int64_t big = extra_ * (base_ + 1);
  if (row < big)
    return static_cast<int>(row / (base_ + 1));
  return static_cast<int>(extra_ + (row - big) / base_);
}

} // namespace tessera

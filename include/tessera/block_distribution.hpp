// Row-block distribution of a global matrix over P ranks: rank r owns rows [begin(r), end(r)),
// block sizes differ by at most one, and ranks with no rows are legal (P > rows).
#pragma once

#include <cstdint>

#include <tessera/export.h>
#include <tessera/shape.hpp>

namespace tessera {

class TESSERA_API BlockDistribution {
public:
  BlockDistribution() = default;
  BlockDistribution(Shape global, int nranks);

  const Shape& global() const noexcept { return global_; }
  int nranks() const noexcept { return nranks_; }

  std::int64_t begin(int r) const noexcept { return r * base_ + (r < extra_ ? r : extra_); }
  std::int64_t end(int r) const noexcept { return begin(r + 1); }
  std::int64_t rows(int r) const noexcept { return base_ + (r < extra_ ? 1 : 0); }
  Shape local_shape(int r) const noexcept { return {rows(r), global_.cols}; }
  std::int64_t local_size(int r) const noexcept { return rows(r) * global_.cols; }
  // The rank that owns global row `row` (0 <= row < rows()).
  int owner(std::int64_t row) const noexcept;
  // The distribution of the transposed matrix over the same ranks.
  BlockDistribution transposed() const { return {global_.transposed(), nranks_}; }

  friend bool operator==(const BlockDistribution&, const BlockDistribution&) = default;

private:
  Shape global_{};
  int nranks_ = 1;
  std::int64_t base_ = 0;  // rows every rank gets
  std::int64_t extra_ = 0; // the first `extra_` ranks get one more
};

} // namespace tessera

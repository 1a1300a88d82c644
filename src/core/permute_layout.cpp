// Reducing a permutation of dimensions to the dimensions that really move (permute_layout.hpp).
#include "core/permute_layout.hpp"

#include <algorithm>

#include "core/throw.hpp"

namespace tessera {

void check_permutation(std::span<const std::int64_t> shape, std::span<const int> axes) {
  const auto rank = static_cast<int>(shape.size());
  TESSERA_REQUIRE(rank >= 1 && rank <= max_permute_rank, InputError,
                  "a permutation of dimensions takes arrays of rank 1 to {}, not {}",
                  max_permute_rank, rank);
  TESSERA_REQUIRE(axes.size() == shape.size(), InputError,
                  "{} axes given for an array of rank {}; name every dimension once", axes.size(),
                  rank);
  std::vector<bool> seen(shape.size(), false);
  for (const int a : axes) {
    TESSERA_REQUIRE(a >= 0 && a < rank, InputError, "axis {} is outside 0..{}", a, rank - 1);
    TESSERA_REQUIRE(!seen[static_cast<std::size_t>(a)], InputError,
                    "axis {} is given twice; name every dimension once", a);
    seen[static_cast<std::size_t>(a)] = true;
  }
  for (const std::int64_t n : shape)
    TESSERA_REQUIRE(n >= 0, InputError, "negative dimension length {}", n);
}

std::vector<std::int64_t> permuted_shape(std::span<const std::int64_t> shape,
                                         std::span<const int> axes) {
  std::vector<std::int64_t> out;
  out.reserve(axes.size());
  for (const int a : axes)
    out.push_back(shape[static_cast<std::size_t>(a)]);
  return out;
}

bool PermuteLayout::identity() const noexcept {
  for (std::size_t k = 0; k < axes.size(); ++k)
    if (axes[k] != static_cast<int>(k))
      return false;
  return true;
}

PermuteLayout reduce_permutation(std::span<const std::int64_t> shape, std::span<const int> axes) {
  check_permutation(shape, axes);
  PermuteLayout r;
  r.elements = 1;
  for (const std::int64_t n : shape)
    r.elements *= n;
  if (r.elements <= 1)
    return r;
  // Output order of the input dimensions longer than 1 (the others place no element).
  std::vector<int> kept;
  for (const int a : axes)
    if (shape[static_cast<std::size_t>(a)] > 1)
      kept.push_back(a);
  // Runs of input dimensions that follow each other in the input (length-1 dimensions between
  // them aside) and in the output become one dimension each.
  const auto next_kept = [&](int a) {
    int b = a + 1;
    while (b < static_cast<int>(shape.size()) && shape[static_cast<std::size_t>(b)] <= 1)
      ++b;
    return b;
  };
  std::vector<std::vector<int>> groups;
  for (const int a : kept) {
    if (!groups.empty() && next_kept(groups.back().back()) == a)
      groups.back().push_back(a);
    else
      groups.push_back({a});
  }
  // Groups by their first input dimension give the reduced input's order.
  std::vector<std::size_t> by_input(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    by_input[g] = g;
  std::sort(by_input.begin(), by_input.end(),
            [&](std::size_t x, std::size_t y) { return groups[x][0] < groups[y][0]; });
  std::vector<int> new_index(groups.size());
  for (std::size_t i = 0; i < by_input.size(); ++i) {
    const std::vector<int>& g = groups[by_input[i]];
    std::int64_t n = 1;
    for (const int a : g)
      n *= shape[static_cast<std::size_t>(a)];
    r.shape.push_back(n);
    new_index[by_input[i]] = static_cast<int>(i);
  }
  for (std::size_t g = 0; g < groups.size(); ++g)
    r.axes.push_back(new_index[g]);
  return r;
}

std::vector<std::int64_t> row_major_strides(std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}

std::int64_t PermuteOuter::count() const noexcept {
  std::int64_t n = 1;
  for (const std::int64_t l : length)
    n *= l;
  return n;
}

void PermuteOuter::offsets(std::int64_t q, std::int64_t& in_off,
                           std::int64_t& out_off) const noexcept {
  in_off = 0;
  out_off = 0;
  for (std::size_t d = length.size(); d-- > 0;) {
    const std::int64_t i = q % length[d];
    q /= length[d];
    in_off += i * in_stride[d];
    out_off += i * out_stride[d];
  }
}

namespace {

// Output dimensions other than skip_a and skip_b, as an outer loop.
PermuteOuter outer_dims(const PermuteLayout& p, const std::vector<std::int64_t>& in_stride,
                        const std::vector<std::int64_t>& out_stride, std::size_t skip_a,
                        std::size_t skip_b) {
  PermuteOuter o;
  for (std::size_t k = 0; k < p.axes.size(); ++k) {
    if (k == skip_a || k == skip_b)
      continue;
    const auto a = static_cast<std::size_t>(p.axes[k]);
    o.length.push_back(p.shape[a]);
    o.in_stride.push_back(in_stride[a]);
    o.out_stride.push_back(out_stride[k]);
  }
  return o;
}

} // namespace

PermuteMoves permute_moves(const PermuteLayout& p) {
  PermuteMoves m;
  m.elements = p.elements;
  if (p.elements == 0)
    return m;
  if (p.shape.empty() || p.identity()) {
    m.kind = PermuteMoves::Kind::Copy;
    return m;
  }
  const std::vector<std::int64_t> in_stride = row_major_strides(p.shape);
  const std::vector<std::int64_t> out_stride = row_major_strides(permuted_shape(p.shape, p.axes));
  const std::size_t last = p.axes.size() - 1;
  if (static_cast<std::size_t>(p.axes[last]) == last) {
    m.kind = PermuteMoves::Kind::Rows;
    m.row = p.shape[last];
    m.outer = outer_dims(p, in_stride, out_stride, last, last);
    return m;
  }
  // Output's innermost dimension j = axes[last]; the input's innermost sits at output position q.
  const auto j = static_cast<std::size_t>(p.axes[last]);
  const auto q = static_cast<std::size_t>(
      std::find(p.axes.begin(), p.axes.end(), static_cast<int>(last)) - p.axes.begin());
  m.kind = PermuteMoves::Kind::Transpose;
  m.rows = p.shape[j];
  m.cols = p.shape[last];
  m.ld_in = in_stride[j];
  m.ld_out = out_stride[q];
  m.outer = outer_dims(p, in_stride, out_stride, q, last);
  return m;
}

} // namespace tessera

// Layouts: the named constructors reduce to a grid of blocks with an owner each; local
// positions follow from the owners (a rank's local block keeps, in global order, the block rows
// and columns where it owns something).
#include <tessera/layout.hpp>

#include <algorithm>
#include <utility>

#include "core/throw.hpp"

namespace tessera {

namespace {

// n split into `parts` nearly equal pieces (the first n % parts one longer), as
// BlockDistribution splits rows.
std::vector<std::int64_t> layout_even_splits(std::int64_t n, int parts) {
  std::vector<std::int64_t> splits(static_cast<std::size_t>(parts) + 1, 0);
  const std::int64_t base = n / parts, extra = n % parts;
  for (int k = 0; k < parts; ++k)
    splits[static_cast<std::size_t>(k) + 1] =
        splits[static_cast<std::size_t>(k)] + base + (k < extra ? 1 : 0);
  return splits;
}

std::vector<std::int64_t> layout_block_splits(std::int64_t n, std::int64_t block) {
  std::vector<std::int64_t> splits{0};
  for (std::int64_t s = block; s < n; s += block)
    splits.push_back(s);
  if (n > 0)
    splits.push_back(n);
  return splits;
}

int layout_grid_rank(int p, int q, int pr, int pc, GridOrder order) {
  return order == GridOrder::RowMajor ? p * pc + q : q * pr + p;
}

void layout_check_splits(const std::vector<std::int64_t>& splits, const char* what) {
  TESSERA_REQUIRE(!splits.empty() && splits.front() == 0, InputError,
                  "layout: {} split points must start at 0", what);
  TESSERA_REQUIRE(std::is_sorted(splits.begin(), splits.end()), InputError,
                  "layout: {} split points must not decrease", what);
}

} // namespace

Layout Layout::row_blocks(Shape global, int nranks, StorageOrder storage) {
  TESSERA_REQUIRE(nranks > 0, InputError, "layout: {} ranks", nranks);
  std::vector<int> owners(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r)
    owners[static_cast<std::size_t>(r)] = r;
  return grid(layout_even_splits(global.rows, nranks), {0, global.cols}, std::move(owners), nranks,
              storage);
}

Layout Layout::col_blocks(Shape global, int nranks, StorageOrder storage) {
  TESSERA_REQUIRE(nranks > 0, InputError, "layout: {} ranks", nranks);
  std::vector<int> owners(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r)
    owners[static_cast<std::size_t>(r)] = r;
  return grid({0, global.rows}, layout_even_splits(global.cols, nranks), std::move(owners), nranks,
              storage);
}

Layout Layout::blocks_2d(Shape global, int pr, int pc, GridOrder order, StorageOrder storage,
                         int nranks) {
  TESSERA_REQUIRE(pr > 0 && pc > 0, InputError, "layout: a {} x {} process grid", pr, pc);
  if (nranks == 0)
    nranks = pr * pc;
  std::vector<int> owners;
  for (int p = 0; p < pr; ++p)
    for (int q = 0; q < pc; ++q)
      owners.push_back(layout_grid_rank(p, q, pr, pc, order));
  return grid(layout_even_splits(global.rows, pr), layout_even_splits(global.cols, pc),
              std::move(owners), nranks, storage);
}

Layout Layout::block_cyclic(const BlockCyclicSpec& s) {
  TESSERA_REQUIRE(s.mb > 0 && s.nb > 0, InputError, "layout: block size {} x {}", s.mb, s.nb);
  TESSERA_REQUIRE(s.pr > 0 && s.pc > 0, InputError, "layout: a {} x {} process grid", s.pr, s.pc);
  TESSERA_REQUIRE(s.rsrc >= 0 && s.rsrc < s.pr && s.csrc >= 0 && s.csrc < s.pc, InputError,
                  "layout: source process ({}, {}) outside the {} x {} grid", s.rsrc, s.csrc, s.pr,
                  s.pc);
  TESSERA_REQUIRE(
      s.grid_ranks.empty() || s.grid_ranks.size() == static_cast<std::size_t>(s.pr) * s.pc,
      InputError, "layout: {} grid ranks for a {} x {} grid", s.grid_ranks.size(), s.pr, s.pc);
  const int nranks = s.nranks > 0 ? s.nranks : s.pr * s.pc;
  auto rows = layout_block_splits(s.global.rows, s.mb);
  auto cols = layout_block_splits(s.global.cols, s.nb);
  const std::size_t nbr = rows.size() - 1, nbc = cols.size() - 1;
  std::vector<int> owners(nbr * nbc);
  for (std::size_t bi = 0; bi < nbr; ++bi)
    for (std::size_t bj = 0; bj < nbc; ++bj) {
      const int p = static_cast<int>((static_cast<std::size_t>(s.rsrc) + bi) % s.pr);
      const int q = static_cast<int>((static_cast<std::size_t>(s.csrc) + bj) % s.pc);
      owners[bi * nbc + bj] = s.grid_ranks.empty()
                                  ? layout_grid_rank(p, q, s.pr, s.pc, s.grid_order)
                                  : s.grid_ranks[static_cast<std::size_t>(p * s.pc + q)];
    }
  return grid(std::move(rows), std::move(cols), std::move(owners), nranks, s.storage, s.lld);
}

Layout Layout::from_scalapack(const int desc[9], int nprow, int npcol, int nranks,
                              std::vector<int> grid_ranks, GridOrder order) {
  TESSERA_REQUIRE(desc[0] == 1, InputError,
                  "layout: descriptor type {} (only dense block-cyclic, type 1)", desc[0]);
  BlockCyclicSpec s;
  s.global = {desc[2], desc[3]};
  s.mb = desc[4];
  s.nb = desc[5];
  s.pr = nprow;
  s.pc = npcol;
  s.rsrc = desc[6];
  s.csrc = desc[7];
  s.grid_order = order;
  s.grid_ranks = std::move(grid_ranks);
  s.nranks = nranks;
  s.lld = desc[8];
  s.storage = StorageOrder::ColMajor;
  return block_cyclic(s);
}

Layout Layout::grid(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits,
                    std::vector<int> owners, int nranks, StorageOrder storage, std::int64_t lld) {
  layout_check_splits(row_splits, "row");
  layout_check_splits(col_splits, "column");
  const std::size_t nblocks = (row_splits.size() - 1) * (col_splits.size() - 1);
  TESSERA_REQUIRE(owners.size() == nblocks, InputError, "layout: {} owners for {} blocks",
                  owners.size(), nblocks);
  TESSERA_REQUIRE(nranks > 0, InputError, "layout: {} ranks", nranks);
  for (int o : owners)
    TESSERA_REQUIRE(o >= 0 && o < nranks, InputError, "layout: owner {} outside {} ranks", o,
                    nranks);
  TESSERA_REQUIRE(lld >= 0, InputError, "layout: leading dimension {}", lld);
  Layout l;
  l.global_ = {row_splits.back(), col_splits.back()};
  l.nranks_ = nranks;
  l.storage_ = storage;
  l.lld_ = lld;
  l.row_splits_ = std::move(row_splits);
  l.col_splits_ = std::move(col_splits);
  l.owners_ = std::move(owners);
  l.compute_local_positions();
  return l;
}

// One pass over the block rows (then the columns): a rank's local rows of block row bi start
// after the heights of the earlier block rows where it owns a block.
void Layout::compute_local_positions() {
  const std::int64_t nbr = block_rows(), nbc = block_cols();
  const auto n = static_cast<std::size_t>(nranks_);
  local_row_.assign(owners_.size(), 0);
  local_col_.assign(owners_.size(), 0);
  std::vector<std::int64_t> next_row(n, 0), next_col(n, 0);
  std::vector<std::int64_t> seen(n, -1), start(n, 0);
  for (std::int64_t bi = 0; bi < nbr; ++bi) {
    const std::int64_t height =
        row_splits_[static_cast<std::size_t>(bi) + 1] - row_splits_[static_cast<std::size_t>(bi)];
    for (std::int64_t bj = 0; bj < nbc; ++bj) {
      const auto b = static_cast<std::size_t>(bi * nbc + bj);
      const auto o = static_cast<std::size_t>(owners_[b]);
      if (seen[o] != bi) {
        seen[o] = bi;
        start[o] = next_row[o];
        next_row[o] += height;
      }
      local_row_[b] = start[o];
    }
  }
  seen.assign(n, -1);
  for (std::int64_t bj = 0; bj < nbc; ++bj) {
    const std::int64_t width =
        col_splits_[static_cast<std::size_t>(bj) + 1] - col_splits_[static_cast<std::size_t>(bj)];
    for (std::int64_t bi = 0; bi < nbr; ++bi) {
      const auto b = static_cast<std::size_t>(bi * nbc + bj);
      const auto o = static_cast<std::size_t>(owners_[b]);
      if (seen[o] != bj) {
        seen[o] = bj;
        start[o] = next_col[o];
        next_col[o] += width;
      }
      local_col_[b] = start[o];
    }
  }
  local_shapes_.assign(n, Shape{});
  for (std::size_t r = 0; r < n; ++r)
    if (next_row[r] > 0 && next_col[r] > 0)
      local_shapes_[r] = {next_row[r], next_col[r]};
}

std::int64_t Layout::find_block_row(std::int64_t i) const {
  return std::upper_bound(row_splits_.begin(), row_splits_.end(), i) - row_splits_.begin() - 1;
}

std::int64_t Layout::find_block_col(std::int64_t j) const {
  return std::upper_bound(col_splits_.begin(), col_splits_.end(), j) - col_splits_.begin() - 1;
}

int Layout::owner(std::int64_t i, std::int64_t j) const {
  return local_index(i, j).rank;
}

LocalIndex Layout::local_index(std::int64_t i, std::int64_t j) const {
  TESSERA_REQUIRE(i >= 0 && i < global_.rows && j >= 0 && j < global_.cols, InputError,
                  "layout: element ({}, {}) outside the {} matrix", i, j, global_.str());
  const std::int64_t bi = find_block_row(i), bj = find_block_col(j);
  return {block_owner(bi, bj),
          block_local_row(bi, bj) + i - row_splits_[static_cast<std::size_t>(bi)],
          block_local_col(bi, bj) + j - col_splits_[static_cast<std::size_t>(bj)]};
}

Shape Layout::local_shape(int r) const {
  return local_shapes_.at(static_cast<std::size_t>(r));
}

std::int64_t Layout::leading_dimension(int r) const {
  if (lld_ > 0)
    return lld_;
  const Shape s = local_shape(r);
  return std::max<std::int64_t>(1, storage_ == StorageOrder::RowMajor ? s.cols : s.rows);
}

std::int64_t Layout::local_extent(int r) const {
  const Shape s = local_shape(r);
  if (s.empty())
    return 0;
  return leading_dimension(r) * (storage_ == StorageOrder::RowMajor ? s.rows : s.cols);
}

Layout Layout::window(std::int64_t i0, std::int64_t j0, std::int64_t m, std::int64_t n) const {
  TESSERA_REQUIRE(i0 >= 0 && j0 >= 0 && m >= 0 && n >= 0 && i0 + m <= global_.rows &&
                      j0 + n <= global_.cols,
                  InputError, "layout: window ({}, {}) + {} x {} outside the {} matrix", i0, j0, m,
                  n, global_.str());
  // Block rows (columns) that meet the window, and how much of each is cut off at its start.
  auto clip = [](const std::vector<std::int64_t>& splits, std::int64_t lo, std::int64_t len,
                 std::vector<std::int64_t>& kept, std::vector<std::int64_t>& cut) {
    std::vector<std::int64_t> out{0};
    for (std::size_t b = 0; b + 1 < splits.size(); ++b) {
      const std::int64_t a = std::max(splits[b], lo), e = std::min(splits[b + 1], lo + len);
      if (a < e) {
        kept.push_back(static_cast<std::int64_t>(b));
        cut.push_back(a - splits[b]);
        out.push_back(e - lo);
      }
    }
    return out;
  };
  std::vector<std::int64_t> rows_kept, rows_cut, cols_kept, cols_cut;
  Layout w = *this;
  w.row_splits_ = clip(row_splits_, i0, m, rows_kept, rows_cut);
  w.col_splits_ = clip(col_splits_, j0, n, cols_kept, cols_cut);
  w.global_ = {m, n};
  const std::size_t nbc = cols_kept.size();
  w.owners_.assign(rows_kept.size() * nbc, 0);
  w.local_row_.assign(w.owners_.size(), 0);
  w.local_col_.assign(w.owners_.size(), 0);
  for (std::size_t a = 0; a < rows_kept.size(); ++a)
    for (std::size_t b = 0; b < nbc; ++b) {
      const std::int64_t bi = rows_kept[a], bj = cols_kept[b];
      w.owners_[a * nbc + b] = block_owner(bi, bj);
      w.local_row_[a * nbc + b] = block_local_row(bi, bj) + rows_cut[a];
      w.local_col_[a * nbc + b] = block_local_col(bi, bj) + cols_cut[b];
    }
  return w;
}

Layout Layout::transposed() const {
  Layout t = *this;
  t.global_ = global_.transposed();
  t.storage_ = storage_ == StorageOrder::RowMajor ? StorageOrder::ColMajor : StorageOrder::RowMajor;
  std::swap(t.row_splits_, t.col_splits_);
  const std::int64_t nbr = block_rows(), nbc = block_cols();
  for (std::int64_t bi = 0; bi < nbr; ++bi)
    for (std::int64_t bj = 0; bj < nbc; ++bj) {
      const auto from = static_cast<std::size_t>(bi * nbc + bj);
      const auto to = static_cast<std::size_t>(bj * nbr + bi);
      t.owners_[to] = owners_[from];
      t.local_row_[to] = local_col_[from];
      t.local_col_[to] = local_row_[from];
    }
  for (Shape& s : t.local_shapes_)
    s = s.transposed();
  return t;
}

} // namespace tessera

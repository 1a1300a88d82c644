// Layouts as values: which rank holds which part of a global M×N matrix, and where in its local
// block. Every layout is a grid of rectangular blocks (row and column split points) with an
// owner rank per block; the named constructors build the common ones:
//
//   Layout::row_blocks({M, N}, P)             rows split evenly (BlockDistribution's split)
//   Layout::col_blocks({M, N}, P)             columns split evenly
//   Layout::blocks_2d({M, N}, pr, pc)         one block per rank of a pr × pc grid
//   Layout::block_cyclic(spec)                ScaLAPACK's 2-D block-cyclic (from_scalapack)
//   Layout::grid(row_splits, col_splits, owners, P)   any grid of blocks
//
// A rank's local block holds the block rows and block columns in which it owns a block, in
// global order (for block-cyclic layouts this is exactly ScaLAPACK's local matrix), stored
// row-major or column-major with a leading dimension. The leading dimension is the calling
// rank's own (as a ScaLAPACK descriptor's lld): 0 means tight.
#pragma once

#include <cstdint>
#include <vector>

#include <tessera/export.h>
#include <tessera/shape.hpp>

namespace tessera {

enum class StorageOrder { RowMajor, ColMajor };
// How ranks are numbered on a pr × pc process grid: RowMajor gives rank p·pc + q to grid
// position (p, q) (BLACS's default "Row" order), ColMajor gives q·pr + p.
enum class GridOrder { RowMajor, ColMajor };

// Everything a ScaLAPACK descriptor and its BLACS grid say about a block-cyclic matrix.
struct BlockCyclicSpec {
  Shape global{};
  std::int64_t mb = 1, nb = 1; // block size
  int pr = 1, pc = 1;          // process grid
  int rsrc = 0, csrc = 0;      // grid row and column holding the first block
  GridOrder grid_order = GridOrder::RowMajor;
  // Optional: the rank of grid position (p, q) at grid_ranks[p·pc + q] (overrides grid_order),
  // for grids whose ranks are numbered otherwise, as BLACS contexts may be.
  std::vector<int> grid_ranks;
  int nranks = 0;       // ranks of the communicator; 0 means pr·pc (more leave ranks idle)
  std::int64_t lld = 0; // this rank's leading dimension; 0 means tight
  StorageOrder storage = StorageOrder::ColMajor;
};

// Where global element (i, j) lives.
struct LocalIndex {
  int rank = 0;
  std::int64_t row = 0; // in the owner's local block
  std::int64_t col = 0;
};

class TESSERA_API Layout {
public:
  Layout() = default;

  static Layout row_blocks(Shape global, int nranks, StorageOrder storage = StorageOrder::RowMajor);
  static Layout col_blocks(Shape global, int nranks, StorageOrder storage = StorageOrder::RowMajor);
  // Rows split evenly over pr, columns over pc; nranks >= pr·pc (the others hold nothing).
  static Layout blocks_2d(Shape global, int pr, int pc, GridOrder order = GridOrder::RowMajor,
                          StorageOrder storage = StorageOrder::RowMajor, int nranks = 0);
  static Layout block_cyclic(const BlockCyclicSpec& spec);
  // desc: a ScaLAPACK array descriptor (dtype, ctxt, m, n, mb, nb, rsrc, csrc, lld); the grid's
  // shape and rank numbering come from BLACS (grid_ranks as in BlockCyclicSpec, may be empty).
  static Layout from_scalapack(const int desc[9], int nprow, int npcol, int nranks,
                               std::vector<int> grid_ranks = {},
                               GridOrder order = GridOrder::RowMajor);
  // row_splits: 0 = r_0 <= r_1 <= … <= r_k = M; col_splits likewise; owners[bi·(cols blocks) + bj]
  // the rank holding block (bi, bj).
  static Layout grid(std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits,
                     std::vector<int> owners, int nranks,
                     StorageOrder storage = StorageOrder::RowMajor, std::int64_t lld = 0);

  const Shape& global() const noexcept { return global_; }
  int nranks() const noexcept { return nranks_; }
  StorageOrder storage() const noexcept { return storage_; }
  const std::vector<std::int64_t>& row_splits() const noexcept { return row_splits_; }
  const std::vector<std::int64_t>& col_splits() const noexcept { return col_splits_; }
  std::int64_t block_rows() const noexcept {
    return static_cast<std::int64_t>(row_splits_.size()) - 1;
  }
  std::int64_t block_cols() const noexcept {
    return static_cast<std::int64_t>(col_splits_.size()) - 1;
  }
  int block_owner(std::int64_t bi, std::int64_t bj) const noexcept {
    return owners_[static_cast<std::size_t>(bi * block_cols() + bj)];
  }
  // Where block (bi, bj)'s first element sits in its owner's local block.
  std::int64_t block_local_row(std::int64_t bi, std::int64_t bj) const noexcept {
    return local_row_[static_cast<std::size_t>(bi * block_cols() + bj)];
  }
  std::int64_t block_local_col(std::int64_t bi, std::int64_t bj) const noexcept {
    return local_col_[static_cast<std::size_t>(bi * block_cols() + bj)];
  }

  int owner(std::int64_t i, std::int64_t j) const;
  LocalIndex local_index(std::int64_t i, std::int64_t j) const;
  // The shape of rank r's local block (0 × 0 when it holds nothing).
  Shape local_shape(int r) const;
  // The calling rank's leading dimension for a local block of rank r's shape: lld when set,
  // else the tight one (local columns when row-major, local rows when column-major).
  std::int64_t leading_dimension(int r) const;
  // Elements rank r's local block spans in memory (leading dimension × the other extent).
  std::int64_t local_extent(int r) const;
  // Offset of local element (row, col) in rank r's local block.
  std::int64_t local_offset(int r, std::int64_t row, std::int64_t col) const {
    const std::int64_t ld = leading_dimension(r);
    return storage_ == StorageOrder::RowMajor ? row * ld + col : col * ld + row;
  }

  // The sub-matrix A(i0 : i0+m, j0 : j0+n) (0-based) as a layout of its own: the same local
  // blocks, addressed from the window's corner.
  Layout window(std::int64_t i0, std::int64_t j0, std::int64_t m, std::int64_t n) const;
  // The layout of Aᵀ over the same memory: splits and local coordinates swapped, storage order
  // flipped (a column-major block read as row-major is its transpose).
  Layout transposed() const;

  friend bool operator==(const Layout&, const Layout&) = default;

private:
  void compute_local_positions();
  std::int64_t find_block_row(std::int64_t i) const;
  std::int64_t find_block_col(std::int64_t j) const;

  Shape global_{};
  int nranks_ = 1;
  StorageOrder storage_ = StorageOrder::RowMajor;
  std::int64_t lld_ = 0;
  std::vector<std::int64_t> row_splits_{0}, col_splits_{0};
  std::vector<int> owners_;
  std::vector<std::int64_t> local_row_, local_col_; // per block
  std::vector<Shape> local_shapes_;                 // per rank
};

} // namespace tessera

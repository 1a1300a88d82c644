// Column pieces of a row-major block <-> one contiguous buffer per piece, for the exchange of the
// distributed transpose. Piece q is columns [splits[q], splits[q+1]) (P pieces, splits[0] = 0,
// splits[P] = the block's width); in the packed buffer it is stored row-major (rows × width_q)
// starting at element rows * splits[q]. One launch moves every piece.
//
// In the distributed transpose the send side packs by transposing (cuda/transpose.hpp); the
// receive side gets, from each source rank r, an n × m_r piece and unpack_columns() places them
// side by side into its n × M output rows.
#pragma once

#include <cstdint>

#include "core/backend_fn.hpp"
#include "core/dtype.hpp"

struct CUstream_st;

namespace tessera::cuda {

// `d_splits`: P + 1 ascending offsets in device memory. Device pointers; asynchronous.
TESSERA_CUDA_FN(void pack_columns(CUstream_st* stream, DType t, const void* in, std::int64_t rows,
                                  std::int64_t ld_in, const std::int64_t* d_splits, int pieces,
                                  void* packed));
TESSERA_CUDA_FN(void unpack_columns(CUstream_st* stream, DType t, const void* packed,
                                    std::int64_t rows, const std::int64_t* d_splits, int pieces,
                                    void* out, std::int64_t ld_out));

} // namespace tessera::cuda

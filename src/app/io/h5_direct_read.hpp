// Reads of contiguous, unfiltered datasets straight from their place in the file (pread), where
// HDF5's MPI-IO path was the slow part of a whole job, several times slower than pread for the
// same bytes (docs/performance.md "Whole jobs"). The bytes are those HDF5 would have delivered:
// only datasets whose file type is the memory type qualify (no conversion).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>

#include "io/h5_box.hpp"

namespace tessera::io::detail {

// Where a dataset's elements start in the file, when it can be read directly: contiguous
// layout, storage allocated, no filters or external files, and `mem_type` equal to its type.
std::optional<std::uint64_t> direct_read_offset(hid_t dset, hid_t mem_type);

// Reads `box` of a dataset of extent `dims` whose elements start at `offset` of `file`, into
// `buf` (row-major, the box's shape). IoError naming the file on a failed or short read.
void read_box_directly(const std::string& file, std::uint64_t offset, const Dims& dims,
                       std::size_t element_size, const Box& box, void* buf);

} // namespace tessera::io::detail

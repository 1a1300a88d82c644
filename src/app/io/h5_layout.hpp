// 2-D datasets read into and written from any layout (tessera/layout.hpp), on a file already
// open: the library's h5::read_layout and h5::write_layout (tessera/hdf5.hpp). Slices of whole
// rows move through the collective row-block transfers of io/h5_matrix.hpp and are
// redistributed into or out of the layout by RedistributePlans.
#pragma once

#include <cstdint>
#include <string>

#include <tessera/dtype.hpp>
#include <tessera/layout.hpp>

#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"

namespace tessera::io {

// Collective over f's communicator. Throws on every rank (InputError for a layout that does not
// fit the communicator, the dataset or the local block; what the I/O layer throws otherwise).
void read_layout(const H5File& f, const std::string& dataset, const Layout& layout, DType dtype,
                 void* block, std::int64_t memory_limit);
// Creates the dataset (InputError when it exists) and writes every rank's local block into it.
void write_layout(H5File& f, const std::string& dataset, const Layout& layout, DType dtype,
                  const void* block, const WriteOptions& options, std::int64_t memory_limit);

} // namespace tessera::io

// The one hyperslab transfer of io/: a box of a dataset of any rank, moved collectively when the
// file is open with MPI-IO (every rank calls, ranks with nothing to move select nothing) and in
// turns or side by side otherwise (io/h5_turns.hpp). The 2-D matrix layer (io/h5_matrix.hpp)
// and the N-D array layer (io/h5_array.hpp) are thin front ends over it: they add their own
// checks of the request and their element types.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/h5_file.hpp"
#include "io/h5_handle.hpp"

namespace tessera::io {

using Dims = std::vector<hsize_t>;

// A box of a dataset: [start[d], start[d] + count[d]) along each dimension; in memory a
// row-major block of the counts. A box with a zero count moves nothing (the rank still takes
// part in the collective call).
struct Box {
  Dims start, count;
  std::uint64_t size() const noexcept;
};

} // namespace tessera::io

namespace tessera::io::detail {

// InputError unless `path` looks like a dataset path (/name or /group/name).
void check_dataset_path(const std::string& path);
// Opens the dataset at `path`; InputError naming it when the path is bad, missing or a group.
unique_hid open_dataset(hid_t file, const std::string& file_name, const std::string& path);
// The current extent of an open dataset.
Dims extent(hid_t dset);

// InputError when `path` exists already (datasets are never overwritten).
void require_new(hid_t file, const std::string& file_name, const std::string& path);
// Creates the dataset (and its parent groups) with the creation properties `dcpl`; `max_dims`
// empty: fixed size. IoError naming the dataset when HDF5 refuses.
void create_dataset_object(hid_t file, const std::string& file_name, const std::string& path,
                           hid_t file_type, const Dims& dims, const Dims& max_dims, hid_t dcpl);

// Run on every rank on the open dataset before any data moves, so that a transfer cannot fail
// on one rank only (a rank failing inside a collective H5Dread leaves the others waiting).
using BoxCheck = std::function<void(hid_t dset)>;
// The check every transfer needs: `box` has the dataset's rank and lies inside it (InputError),
// and `buf` is there when the box is not empty (InternalError). The arguments must outlive the
// transfer.
BoxCheck box_fits(const std::string& file_name, const std::string& path, const Box& box,
                  const void* buf);

// Moves this rank's `box` of dataset `path` between the file and `buf` (elements of `mem_type`,
// converted where HDF5 can). Collective over the file's communicator; every rank throws when it
// fails on one. A parallel read whose box touches a chunk that was never written (h5py,
// netCDF4) is independent on every rank: HDF5 1.10's collective reads fail on such chunks.
// Both return whether the transfer really was collective (H5Pget_mpio_no_collective_cause
// reported nothing); true in serial mode.
bool read_box(const H5File& f, const std::string& path, const Box& box, hid_t mem_type, void* buf,
              const BoxCheck& check);
// The write reserves the file's space after the checks, so that a full disk shows before the
// transfer.
bool write_box(H5File& f, const std::string& path, const Box& box, hid_t mem_type, const void* buf,
               const BoxCheck& check);

} // namespace tessera::io::detail

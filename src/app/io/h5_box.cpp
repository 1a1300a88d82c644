// Box selection and transfer, shared by the 2-D and N-D dataset layers (see h5_box.hpp).
#include "io/h5_box.hpp"

#include <algorithm>
#include <optional>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_direct_read.hpp"
#include "io/h5_error.hpp"
#include "io/h5_path.hpp"
#include "io/h5_turns.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"

namespace tessera::io {

std::uint64_t Box::size() const noexcept {
  std::uint64_t s = 1;
  for (hsize_t c : count)
    s *= c;
  return count.empty() ? 0 : s;
}

namespace detail {

namespace {

enum class Direction { Read, Write };

// Collective: one H5Dread/H5Dwrite on every rank of a parallel file. Independent: a parallel
// file, each rank on its own. Alone: a file this rank opened with the default driver.
enum class Mode { Collective, Independent, Alone };

// Whether `b` touches an HDF5 chunk that was never written (h5py and netCDF write chunks only
// where data went; the rest read as the fill value). HDF5 1.10's collective reads cannot take
// such chunks: their undefined address ends up in the MPI file view (MPI_ERR_TYPE in
// H5FD__mpio_read, "addr overflow" for filtered data), on the ranks whose box holds them only,
// while the others wait inside the collective read. Independent reads fill them.
bool touches_unwritten_chunk(hid_t dset, const Box& b) {
  if (b.size() == 0)
    return false;
  const unique_hid dcpl = checked_hid(H5Dget_create_plist(dset), "H5Dget_create_plist");
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  CHECK_HDF5(layout);
  if (layout != H5D_CHUNKED)
    return false;
  const std::size_t nd = b.count.size();
  Dims chunk(nd, 1);
  CHECK_HDF5(H5Pget_chunk(dcpl.get(), static_cast<int>(nd), chunk.data()));
  Dims first(nd), last(nd), offset(nd);
  for (std::size_t k = 0; k < nd; ++k) {
    first[k] = b.start[k] / chunk[k];
    last[k] = (b.start[k] + b.count[k] - 1) / chunk[k];
  }
  Dims at = first; // chunk coordinates, the last dimension counting fastest
  for (;;) {
    for (std::size_t k = 0; k < nd; ++k)
      offset[k] = at[k] * chunk[k];
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    CHECK_HDF5(H5Dget_chunk_info_by_coord(dset, offset.data(), &mask, &addr, &size));
    if (addr == HADDR_UNDEF)
      return true;
    std::size_t k = nd;
    while (k > 0 && at[k - 1] == last[k - 1]) {
      at[k - 1] = first[k - 1];
      --k;
    }
    if (k == 0)
      return false;
    ++at[k - 1];
  }
}

bool transfer(hid_t dset, const Box& b, hid_t mem_type, void* buf, Direction dir, Mode mode) {
  const unique_hid file_space = checked_hid(H5Dget_space(dset), "H5Dget_space");
  // A simple dataspace of at least one element: a rank with nothing to move selects none but
  // keeps a simple space, which collective I/O requires.
  const hsize_t n = std::max<hsize_t>(b.size(), 1);
  const unique_hid mem_space = checked_hid(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
  if (b.size() == 0) {
    CHECK_HDF5(H5Sselect_none(file_space.get()));
    CHECK_HDF5(H5Sselect_none(mem_space.get()));
  } else {
    CHECK_HDF5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, b.start.data(), nullptr,
                                   b.count.data(), nullptr));
  }
  const unique_hid dxpl = checked_hid(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(H5P_DATASET_XFER)");
#ifdef H5_HAVE_PARALLEL
  if (mode != Mode::Alone)
    CHECK_HDF5(H5Pset_dxpl_mpio(dxpl.get(), mode == Mode::Collective ? H5FD_MPIO_COLLECTIVE
                                                                     : H5FD_MPIO_INDEPENDENT));
#endif
  // HDF5 rejects a null buffer even when nothing is selected.
  static char dummy[16];
  void* ptr = b.size() == 0 ? dummy : buf;
  if (dir == Direction::Read)
    CHECK_HDF5(H5Dread(dset, mem_type, mem_space.get(), file_space.get(), dxpl.get(), ptr));
  else
    CHECK_HDF5(H5Dwrite(dset, mem_type, mem_space.get(), file_space.get(), dxpl.get(), ptr));
  bool was_collective = mode != Mode::Independent;
#ifdef H5_HAVE_PARALLEL
  if (mode == Mode::Collective) {
    std::uint32_t local = 0, global = 0;
    CHECK_HDF5(H5Pget_mpio_no_collective_cause(dxpl.get(), &local, &global));
    was_collective = local == H5D_MPIO_COLLECTIVE && global == H5D_MPIO_COLLECTIVE;
  }
#endif
  return was_collective;
}

// `reserve` runs on every rank of a parallel file after the checks (writes only).
bool move(const H5File& f, const std::string& path, const Box& box, hid_t mem_type, void* buf,
          Direction dir, const BoxCheck& check, const std::function<void()>& reserve) {
  bool was_collective = true;
  if (f.parallel()) {
    unique_hid dset;
    bool unwritten = false;
    std::optional<std::uint64_t> direct; // the same on every rank: it depends on metadata only
    mpi::collectively(f.comm(), [&] {
      dset = open_dataset(f.id(), f.path(), path);
      check(dset.get());
      if (dir == Direction::Read)
        direct = direct_read_offset(dset.get(), mem_type);
      unwritten = dir == Direction::Read && !direct && touches_unwritten_chunk(dset.get(), box);
    });
    if (direct) {
      const Dims dims = extent(dset.get());
      const std::size_t element_size = H5Tget_size(mem_type); // the file's type, too
      mpi::collectively(f.comm(), [&] {
        read_box_directly(f.disk_path(), *direct, dims, element_size, box, buf);
      });
      dset.reset(); // collective, as below
      return true;  // no fallback to HDF5's independent I/O
    }
    // Every rank must make the same choice: a rank alone in a collective read waits forever.
    const bool independent = dir == Direction::Read && mpi::any_rank(f.comm(), unwritten);
    const Mode mode = independent ? Mode::Independent : Mode::Collective;
    if (reserve)
      reserve();
    collective_transfer(
        f, [&] { was_collective = transfer(dset.get(), box, mem_type, buf, dir, mode); });
    // Closing a dataset of a parallel file is collective; every rank reaches it here.
    dset.reset();
    return was_collective;
  }
  auto turn = [&] {
    if (dir == Direction::Write)
      f.reserve_in_turn();
    unique_hid file = open_file_alone(f.disk_path(), dir == Direction::Write);
    {
      const unique_hid dset = open_dataset(file.get(), f.path(), path);
      check(dset.get());
      was_collective = transfer(dset.get(), box, mem_type, buf, dir, Mode::Alone);
    }
    // Closing flushes this rank's part before the next rank opens the file.
    CHECK_HDF5(H5Fclose(file.release()));
  };
  if (dir == Direction::Write)
    take_turns(f.comm(), turn);
  else
    mpi::collectively(f.comm(), turn); // readers do not disturb each other
  return was_collective;
}

} // namespace

void check_dataset_path(const std::string& path) {
  if (path.size() < 2 || path.front() != '/' || path.back() == '/')
    TESSERA_THROW(InputError, "'{}' is not a dataset path (expected /name or /group/name)", path);
}

unique_hid open_dataset(hid_t file, const std::string& file_name, const std::string& path) {
  check_dataset_path(path);
  if (!path_exists(file, path))
    TESSERA_THROW(InputError, "no dataset {} in '{}'", path, file_name);
  return open_dataset_object(file, file_name, path);
}

Dims extent(hid_t dset) {
  const unique_hid space = checked_hid(H5Dget_space(dset), "H5Dget_space");
  const int nd = H5Sget_simple_extent_ndims(space.get());
  CHECK_HDF5(nd);
  Dims d(static_cast<std::size_t>(nd));
  CHECK_HDF5(H5Sget_simple_extent_dims(space.get(), d.data(), nullptr));
  return d;
}

void require_new(hid_t file, const std::string& file_name, const std::string& path) {
  if (path_exists(file, path))
    TESSERA_THROW(InputError, "{} exists already in '{}'", path, file_name);
}

void create_dataset_object(hid_t file, const std::string& file_name, const std::string& path,
                           hid_t file_type, const Dims& dims, const Dims& max_dims, hid_t dcpl) {
  const unique_hid lcpl = checked_hid(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate(H5P_LINK_CREATE)");
  CHECK_HDF5(H5Pset_create_intermediate_group(lcpl.get(), 1));
  const unique_hid space =
      checked_hid(H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                                   max_dims.empty() ? nullptr : max_dims.data()),
                  "H5Screate_simple");
  const hid_t dset =
      H5Dcreate2(file, path.c_str(), file_type, space.get(), lcpl.get(), dcpl, H5P_DEFAULT);
  if (dset < 0)
    TESSERA_THROW(IoError, "cannot create dataset {} in '{}': {}", path, file_name,
                  take_hdf5_error());
  CHECK_HDF5(H5Dclose(dset));
}

bool read_box(const H5File& f, const std::string& path, const Box& box, hid_t mem_type, void* buf,
              const BoxCheck& check) {
  return move(f, path, box, mem_type, buf, Direction::Read, check, {});
}

bool write_box(H5File& f, const std::string& path, const Box& box, hid_t mem_type, const void* buf,
               const BoxCheck& check) {
  if (!f.writable())
    TESSERA_THROW(InternalError, "'{}' was opened for reading, not writing {}", f.path(), path);
  // One transfer routine for both directions; a write only reads the buffer.
  return move(f, path, box, mem_type, const_cast<void*>(buf), Direction::Write, check,
              [&] { f.reserve_space(); });
}

BoxCheck box_fits(const std::string& file_name, const std::string& path, const Box& box,
                  const void* buf) {
  return [&file_name, &path, &box, buf](hid_t dset) {
    const Dims d = extent(dset);
    bool ok = box.start.size() == d.size() && box.count.size() == d.size();
    for (std::size_t k = 0; ok && k < d.size(); ++k)
      ok = box.start[k] + box.count[k] <= d[k];
    if (!ok)
      TESSERA_THROW(InputError, "a box of rank {} does not fit dataset {} in '{}' of rank {}",
                    box.count.size(), path, file_name, d.size());
    if (box.size() > 0 && buf == nullptr)
      TESSERA_THROW(InternalError, "null buffer for a transfer of {}", path);
  };
}

} // namespace detail

} // namespace tessera::io

// N-dimensional dataset creation and box transfers on the io/ file conventions (h5_array.hpp).
#include "solver/h5_array.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_error.hpp"
#include "io/h5_handle.hpp"
#include "io/h5_path.hpp"
#include "io/h5_turns.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

namespace tessera::heat2d::h5 {

namespace {

hid_t memory_type(Elem e) {
  return e == Elem::f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
}
hid_t file_type(Elem e) {
  return e == Elem::f64 ? H5T_IEEE_F64LE : H5T_STD_I64LE;
}

io::unique_hid open_dataset(hid_t file, const std::string& file_name, const std::string& path) {
  if (!io::detail::path_exists(file, path))
    TESSERA_THROW(InputError, "no dataset {} in '{}'", path, file_name);
  io::unique_hid obj = io::detail::open_object(file, file_name, path);
  if (H5Iget_type(obj.get()) != H5I_DATASET)
    TESSERA_THROW(InputError, "{} in '{}' is a group, not a dataset", path, file_name);
  return obj;
}

Dims extent(hid_t dset) {
  const io::unique_hid space = io::checked_hid(H5Dget_space(dset), "H5Dget_space");
  const int nd = H5Sget_simple_extent_ndims(space.get());
  CHECK_HDF5(nd);
  Dims d(static_cast<std::size_t>(nd));
  CHECK_HDF5(H5Sget_simple_extent_dims(space.get(), d.data(), nullptr));
  return d;
}

// Checked by every rank before a transfer, so the transfer cannot fail on one rank only.
void check_box(hid_t dset, const Box& b, const void* buf, const std::string& file_name,
               const std::string& path) {
  const Dims d = extent(dset);
  bool ok = b.start.size() == d.size() && b.count.size() == d.size();
  for (std::size_t k = 0; ok && k < d.size(); ++k)
    ok = b.start[k] + b.count[k] <= d[k];
  if (!ok)
    TESSERA_THROW(InputError, "a box of rank {} does not fit dataset {} in '{}' of rank {}",
                  b.count.size(), path, file_name, d.size());
  if (b.size() > 0 && buf == nullptr)
    TESSERA_THROW(InternalError, "null buffer for a transfer of {}", path);
}

enum class Direction { Read, Write };

void transfer(hid_t dset, Elem e, const Box& b, void* buf, Direction dir, bool collective) {
  const io::unique_hid file_space = io::checked_hid(H5Dget_space(dset), "H5Dget_space");
  const hsize_t n = std::max<hsize_t>(b.size(), 1);
  const io::unique_hid mem_space =
      io::checked_hid(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
  if (b.size() == 0) {
    CHECK_HDF5(H5Sselect_none(file_space.get()));
    CHECK_HDF5(H5Sselect_none(mem_space.get()));
  } else {
    CHECK_HDF5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, b.start.data(), nullptr,
                                   b.count.data(), nullptr));
  }
  const io::unique_hid dxpl = io::checked_hid(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
#ifdef H5_HAVE_PARALLEL
  if (collective)
    CHECK_HDF5(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE));
#endif
  static char dummy[16]; // HDF5 rejects a null buffer even when nothing is selected
  void* ptr = b.size() == 0 ? dummy : buf;
  if (dir == Direction::Read)
    CHECK_HDF5(H5Dread(dset, memory_type(e), mem_space.get(), file_space.get(), dxpl.get(), ptr));
  else
    CHECK_HDF5(H5Dwrite(dset, memory_type(e), mem_space.get(), file_space.get(), dxpl.get(), ptr));
}

void move(const io::H5File& f, const std::string& path, Elem e, const Box& mine, void* buf,
          Direction dir) {
  if (f.parallel()) {
    io::unique_hid dset;
    mpi::collectively(f.comm(), [&] {
      dset = open_dataset(f.id(), f.path(), path);
      check_box(dset.get(), mine, buf, f.path(), path);
    });
    io::detail::collective_transfer(f, [&] { transfer(dset.get(), e, mine, buf, dir, true); });
    dset.reset(); // collective close: every rank is here
    return;
  }
  auto turn = [&] {
    if (dir == Direction::Write)
      f.reserve_in_turn();
    io::unique_hid file = io::detail::open_file_alone(f.disk_path(), dir == Direction::Write);
    {
      const io::unique_hid dset = open_dataset(file.get(), f.path(), path);
      check_box(dset.get(), mine, buf, f.path(), path);
      transfer(dset.get(), e, mine, buf, dir, false);
    }
    CHECK_HDF5(H5Fclose(file.release()));
  };
  if (dir == Direction::Write)
    io::detail::take_turns(f.comm(), turn);
  else
    mpi::collectively(f.comm(), turn); // readers do not disturb each other
}

Box whole_on_root(const io::H5File& f, std::size_t n) {
  const bool root = mpi::comm_rank(f.comm()) == 0;
  return {{0}, {root ? static_cast<hsize_t>(n) : 0}};
}

template <class T>
std::vector<T> read_vector(const io::H5File& f, const std::string& path, Elem e) {
  const Dims d = dims(f, path);
  if (d.size() != 1)
    TESSERA_THROW(InputError, "dataset {} in '{}' has rank {}, expected 1", path, f.path(),
                  d.size());
  std::vector<T> v(d[0]);
  read(f, path, e, {{0}, {d[0]}}, v.data());
  return v;
}

} // namespace

std::uint64_t Box::size() const noexcept {
  std::uint64_t s = 1;
  for (hsize_t c : count)
    s *= c;
  return count.empty() ? 0 : s;
}

void create(io::H5File& f, const std::string& path, Elem e, const Dims& dims,
            const CreateOptions& opts) {
  io::detail::change_metadata(f, [&](hid_t file) {
    if (io::detail::path_exists(file, path))
      TESSERA_THROW(InputError, "{} exists already in '{}'", path, f.path());
    const io::unique_hid lcpl = io::checked_hid(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate");
    CHECK_HDF5(H5Pset_create_intermediate_group(lcpl.get(), 1));
    const io::unique_hid dcpl = io::checked_hid(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
    // Every element is written; filling first would write the data twice.
    CHECK_HDF5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
    if (!opts.chunk.empty())
      CHECK_HDF5(H5Pset_chunk(dcpl.get(), static_cast<int>(opts.chunk.size()), opts.chunk.data()));
    const io::unique_hid space =
        io::checked_hid(H5Screate_simple(static_cast<int>(dims.size()), dims.data(),
                                         opts.max_dims.empty() ? nullptr : opts.max_dims.data()),
                        "H5Screate_simple");
    const hid_t dset = H5Dcreate2(file, path.c_str(), file_type(e), space.get(), lcpl.get(),
                                  dcpl.get(), H5P_DEFAULT);
    if (dset < 0)
      TESSERA_THROW(IoError, "cannot create dataset {} in '{}': {}", path, f.path(),
                    io::detail::take_hdf5_error());
    CHECK_HDF5(H5Dclose(dset));
  });
  f.note_dataset(path, dims, opts.chunk, 8);
}

void extend(io::H5File& f, const std::string& path, const Dims& d) {
  io::detail::change_metadata(f, [&](hid_t file) {
    const io::unique_hid dset = open_dataset(file, f.path(), path);
    CHECK_HDF5(H5Dset_extent(dset.get(), d.data()));
  });
  f.note_extent(path, d);
}

Dims dims(const io::H5File& f, const std::string& path) {
  Dims d;
  io::detail::read_metadata(
      f, [&](hid_t file) { d = extent(open_dataset(file, f.path(), path).get()); });
  return d;
}

bool exists(const io::H5File& f, const std::string& path) {
  bool found = false;
  io::detail::read_metadata(f, [&](hid_t file) { found = io::detail::path_exists(file, path); });
  return found;
}

void write(io::H5File& f, const std::string& path, Elem e, const Box& mine, const void* buf) {
  if (!f.writable())
    TESSERA_THROW(InternalError, "'{}' was opened for reading, not writing {}", f.path(), path);
  f.reserve_space(); // a full disk shows here, not inside the collective write
  move(f, path, e, mine, const_cast<void*>(buf), Direction::Write);
}

void read(const io::H5File& f, const std::string& path, Elem e, const Box& mine, void* buf) {
  move(f, path, e, mine, buf, Direction::Read);
}

void write_vector(io::H5File& f, const std::string& path, const std::vector<double>& v) {
  create(f, path, Elem::f64, {v.size()});
  write(f, path, Elem::f64, whole_on_root(f, v.size()), v.data());
}

void write_vector(io::H5File& f, const std::string& path, const std::vector<std::int64_t>& v) {
  create(f, path, Elem::i64, {v.size()});
  write(f, path, Elem::i64, whole_on_root(f, v.size()), v.data());
}

std::vector<double> read_f64_vector(const io::H5File& f, const std::string& path) {
  return read_vector<double>(f, path, Elem::f64);
}

std::vector<std::int64_t> read_i64_vector(const io::H5File& f, const std::string& path) {
  return read_vector<std::int64_t>(f, path, Elem::i64);
}

} // namespace tessera::heat2d::h5

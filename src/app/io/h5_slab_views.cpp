// Virtual 2-D views of the slabs of a 3-D dataset (see h5_slab_views.hpp).
#include "io/h5_slab_views.hpp"

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_error.hpp"
#include "io/h5_handle.hpp"
#include "io/h5_turns.hpp"

namespace tessera::io {

std::string slab_view_path(const std::string& group, std::int64_t k) {
  return group + "/" + std::to_string(k);
}

void create_slab_views(H5File& f, const std::string& source, const std::string& group,
                       std::int64_t count) {
  f.reserve_space();
  detail::change_metadata(f, [&](hid_t file) {
    const unique_hid src = checked_hid(H5Dopen2(file, source.c_str(), H5P_DEFAULT), "H5Dopen2");
    const unique_hid src_space = checked_hid(H5Dget_space(src.get()), "H5Dget_space");
    hsize_t dims[3] = {0, 0, 0};
    if (H5Sget_simple_extent_ndims(src_space.get()) != 3 ||
        H5Sget_simple_extent_dims(src_space.get(), dims, nullptr) < 0 ||
        dims[0] < static_cast<hsize_t>(count))
      TESSERA_THROW(InternalError, "{} in '{}' is not a 3-D dataset of {} slabs", source, f.path(),
                    count);
    const hsize_t view_dims[2] = {dims[1], dims[2]};
    const unique_hid view_space =
        checked_hid(H5Screate_simple(2, view_dims, nullptr), "H5Screate_simple");
    const unique_hid lcpl = checked_hid(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate(H5P_LINK_CREATE)");
    CHECK_HDF5(H5Pset_create_intermediate_group(lcpl.get(), 1));
    for (std::int64_t k = 0; k < count; ++k) {
      const unique_hid dcpl =
          checked_hid(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(H5P_DATASET_CREATE)");
      const unique_hid slab = checked_hid(H5Scopy(src_space.get()), "H5Scopy");
      const hsize_t start[3] = {static_cast<hsize_t>(k), 0, 0}, block[3] = {1, dims[1], dims[2]};
      CHECK_HDF5(H5Sselect_hyperslab(slab.get(), H5S_SELECT_SET, start, nullptr, block, nullptr));
      // "." is the file that holds the view: it stays right when the file is renamed.
      CHECK_HDF5(H5Pset_virtual(dcpl.get(), view_space.get(), ".", source.c_str(), slab.get()));
      const std::string path = slab_view_path(group, k);
      const unique_hid view =
          checked_hid(H5Dcreate2(file, path.c_str(), H5T_IEEE_F64LE, view_space.get(), lcpl.get(),
                                 dcpl.get(), H5P_DEFAULT),
                      "H5Dcreate2 (virtual)");
    }
  });
}

} // namespace tessera::io

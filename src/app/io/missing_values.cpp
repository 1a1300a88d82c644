// Reading the missing-value and packing attributes (io/missing_values.hpp).
#include "io/missing_values.hpp"

#include <hdf5.h>

#include <vector>

#include "core/check.hpp"
#include "core/log.hpp"
#include "io/h5_box.hpp"
#include "io/h5_error.hpp"
#include "io/h5_handle.hpp"
#include "io/h5_turns.hpp"

namespace tessera::io {

namespace {

// Every element of a numeric attribute as double; empty when it is missing or not numeric.
std::vector<double> numbers(hid_t obj, const char* name, const std::string& where) {
  if (H5Aexists(obj, name) <= 0)
    return {};
  const unique_hid attr = checked_hid(H5Aopen(obj, name, H5P_DEFAULT), "H5Aopen");
  const unique_hid type = checked_hid(H5Aget_type(attr.get()), "H5Aget_type");
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
    log::warn("{}: attribute {} is not a number; ignored", where, name);
    return {};
  }
  const unique_hid space = checked_hid(H5Aget_space(attr.get()), "H5Aget_space");
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  CHECK_HDF5(n);
  std::vector<double> v(static_cast<std::size_t>(n));
  if (n > 0)
    CHECK_HDF5(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, v.data()));
  return v;
}

} // namespace

bool is_packed(hid_t dset) {
  return H5Aexists(dset, "scale_factor") > 0 || H5Aexists(dset, "add_offset") > 0;
}

MissingValues read_missing_values(const H5File& f, const std::string& path, bool skip_nan) {
  MissingValues m;
  m.skip_nan = skip_nan;
  detail::read_metadata(f, [&](hid_t file) {
    const unique_hid dset = detail::open_dataset(file, f.path(), path);
    const std::string where = f.path() + ":" + path;
    for (const char* name : {"_FillValue", "missing_value"})
      for (double v : numbers(dset.get(), name, where))
        m.values.push_back(v);
    // CF: valid_range (two values) or valid_min and valid_max; the range is of stored values.
    if (const auto r = numbers(dset.get(), "valid_range", where); r.size() == 2) {
      m.valid_min = r[0];
      m.valid_max = r[1];
    } else {
      if (!r.empty())
        log::warn("{}: valid_range holds {} values, not 2; ignored", where, r.size());
      if (const auto lo = numbers(dset.get(), "valid_min", where); !lo.empty())
        m.valid_min = lo[0];
      if (const auto hi = numbers(dset.get(), "valid_max", where); !hi.empty())
        m.valid_max = hi[0];
    }
    if (const auto s = numbers(dset.get(), "scale_factor", where); !s.empty())
      m.scale_factor = s[0];
    if (const auto o = numbers(dset.get(), "add_offset", where); !o.empty())
      m.add_offset = o[0];
  });
  return m;
}

} // namespace tessera::io

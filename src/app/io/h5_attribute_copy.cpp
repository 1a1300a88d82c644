// Attributes, fill value and storage of a dataset, read from one file and written to another
// (see h5_attribute_copy.hpp).
#include "io/h5_attribute_copy.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "io/h5_error.hpp"
#include "io/h5_path.hpp"
#include "io/h5_turns.hpp"
#include "io/h5_type.hpp"

namespace tessera::io {

namespace {

// Attributes that name objects of their own file, or that HDF5 and netCDF-4 keep themselves.
// _NCProperties (on the root) names the netCDF library that wrote the input file.
constexpr std::array kManaged = {"DIMENSION_LIST", "REFERENCE_LIST",      "CLASS",        "NAME",
                                 "_Netcdf4Dimid",  "_Netcdf4Coordinates", "_NCProperties"};

// The root group ("/") or a dataset.
unique_hid open_holder(hid_t file, const std::string& file_name, const std::string& path) {
  return path == "/" ? detail::open_object(file, file_name, path)
                     : detail::open_dataset_object(file, file_name, path);
}

herr_t collect_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

} // namespace

DatasetAttributes DatasetAttributes::read(const H5File& f, const std::string& dataset) {
  DatasetAttributes out;
  detail::read_metadata(f, [&](hid_t file) {
    out = {};
    const unique_hid d = open_holder(file, f.path(), dataset);
    std::vector<std::string> names;
    hsize_t at = 0;
    CHECK_HDF5(H5Aiterate2(d.get(), H5_INDEX_NAME, H5_ITER_INC, &at, collect_name, &names));
    for (const std::string& name : names) {
      if (std::find(kManaged.begin(), kManaged.end(), name) != kManaged.end())
        continue;
      const unique_hid attr = checked_hid(H5Aopen(d.get(), name.c_str(), H5P_DEFAULT), "H5Aopen");
      Attribute a;
      a.name = name;
      a.type = checked_hid(H5Aget_type(attr.get()), "H5Aget_type");
      a.type = checked_hid(H5Tcopy(a.type.get()), "H5Tcopy");
      const unique_hid space = checked_hid(H5Aget_space(attr.get()), "H5Aget_space");
      const int rank = H5Sget_simple_extent_ndims(space.get());
      CHECK_HDF5(rank);
      a.dims.resize(static_cast<std::size_t>(rank));
      CHECK_HDF5(H5Sget_simple_extent_dims(space.get(), a.dims.data(), nullptr));
      const hssize_t n = H5Sget_simple_extent_npoints(space.get());
      CHECK_HDF5(n);
      const htri_t vstr = H5Tis_variable_str(a.type.get());
      CHECK_HDF5(vstr);
      if (vstr > 0) {
        a.vlen_string = true;
        std::vector<char*> ptrs(static_cast<std::size_t>(n), nullptr);
        CHECK_HDF5(H5Aread(attr.get(), a.type.get(), ptrs.data()));
        for (char* p : ptrs)
          a.strings.emplace_back(p ? p : "");
        CHECK_HDF5(H5Dvlen_reclaim(a.type.get(), space.get(), H5P_DEFAULT, ptrs.data()));
      } else if (H5Tdetect_class(a.type.get(), H5T_REFERENCE) > 0 ||
                 H5Tdetect_class(a.type.get(), H5T_VLEN) > 0) {
        out.skipped_.push_back(name); // they point into the input file, or need reclaiming
        continue;
      } else {
        a.raw.resize(static_cast<std::size_t>(n) * H5Tget_size(a.type.get()));
        if (!a.raw.empty())
          CHECK_HDF5(H5Aread(attr.get(), a.type.get(), a.raw.data()));
      }
      out.attrs_.push_back(std::move(a));
    }
  });
  return out;
}

void DatasetAttributes::write(H5File& f, const std::string& dataset,
                              const std::vector<std::string>& except, Existing existing) const {
  if (attrs_.empty())
    return;
  f.reserve_space();
  detail::change_metadata(f, [&](hid_t file) {
    const unique_hid d = open_holder(file, f.path(), dataset);
    for (const Attribute& a : attrs_) {
      if (std::find(except.begin(), except.end(), a.name) != except.end())
        continue;
      const htri_t exists = H5Aexists(d.get(), a.name.c_str());
      CHECK_HDF5(exists);
      if (exists > 0 && existing == Existing::Keep)
        continue;
      if (exists > 0)
        CHECK_HDF5(H5Adelete(d.get(), a.name.c_str()));
      const unique_hid space = a.dims.empty()
                                   ? checked_hid(H5Screate(H5S_SCALAR), "H5Screate(H5S_SCALAR)")
                                   : checked_hid(H5Screate_simple(static_cast<int>(a.dims.size()),
                                                                  a.dims.data(), nullptr),
                                                 "H5Screate_simple");
      const unique_hid attr = checked_hid(
          H5Acreate2(d.get(), a.name.c_str(), a.type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
          "H5Acreate2");
      if (a.vlen_string) {
        std::vector<const char*> ptrs;
        for (const std::string& s : a.strings)
          ptrs.push_back(s.c_str());
        CHECK_HDF5(H5Awrite(attr.get(), a.type.get(), ptrs.data()));
      } else if (!a.raw.empty()) {
        CHECK_HDF5(H5Awrite(attr.get(), a.type.get(), a.raw.data()));
      }
    }
  });
}

std::vector<std::string> DatasetAttributes::names() const {
  std::vector<std::string> v;
  for (const Attribute& a : attrs_)
    v.push_back(a.name);
  return v;
}

DatasetStorage dataset_storage(const H5File& f, const std::string& dataset, DType dtype) {
  DatasetStorage out;
  detail::read_metadata(f, [&](hid_t file) {
    out = {};
    const unique_hid d = detail::open_dataset_object(file, f.path(), dataset);
    const unique_hid dcpl = checked_hid(H5Dget_create_plist(d.get()), "H5Dget_create_plist");
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    CHECK_HDF5(layout);
    if (layout == H5D_CHUNKED) {
      hsize_t chunk[H5S_MAX_RANK] = {};
      const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk);
      CHECK_HDF5(rank);
      out.options.chunk.assign(chunk, chunk + rank);
      if (rank == 2) {
        out.options.chunk_rows = static_cast<std::int64_t>(chunk[0]);
        out.options.chunk_cols = static_cast<std::int64_t>(chunk[1]);
      }
    }
    const int nfilters = H5Pget_nfilters(dcpl.get());
    CHECK_HDF5(nfilters);
    for (int k = 0; k < nfilters; ++k) {
      unsigned flags = 0, filter_config = 0;
      std::size_t nvalues = 8;
      unsigned values[8] = {};
      char name[64] = {};
      const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(k), &flags, &nvalues,
                                             values, sizeof name, name, &filter_config);
      CHECK_HDF5(id);
      if (id == H5Z_FILTER_DEFLATE)
        out.options.deflate = nvalues > 0 ? static_cast<int>(values[0]) : 6;
      else if (id == H5Z_FILTER_SHUFFLE)
        out.options.shuffle = true;
      else
        out.dropped.push_back(name[0] ? std::string(name) : fmt::format("filter {}", id));
    }
    H5D_fill_value_t status{};
    CHECK_HDF5(H5Pfill_value_defined(dcpl.get(), &status));
    if (status == H5D_FILL_VALUE_USER_DEFINED) {
      const unique_hid mem = h5_memory_type(dtype);
      out.options.fill_value.resize(dtype_size(dtype));
      CHECK_HDF5(H5Pget_fill_value(dcpl.get(), mem.get(), out.options.fill_value.data()));
    }
  });
  return out;
}

} // namespace tessera::io

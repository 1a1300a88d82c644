// The throw helper behind CHECK_HDF5, HidTraits::destroy, and the error-stack reading of
// h5_error.hpp.
#include <hdf5.h>

#include <mutex>
#include <string>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "io/h5_error.hpp"
#include "io/h5_handle.hpp"

namespace tessera::io::detail {

void ensure_hdf5_ready() {
  static std::once_flag once;
  std::call_once(once, [] {
    H5open();
    // Errors become exceptions with the innermost message; the automatic stack dump would
    // print the same failure again on every rank.
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

namespace {

struct Innermost {
  std::string desc;
  std::string func;
};

// H5E_WALK_UPWARD visits the most specific error first (n == 0).
herr_t take_first(unsigned n, const H5E_error2_t* e, void* data) {
  if (n != 0)
    return 0;
  auto* out = static_cast<Innermost*>(data);
  if (e->desc && *e->desc) {
    out->desc = e->desc;
  } else {
    char text[256] = {};
    H5E_type_t type{};
    if (H5Eget_msg(e->min_num, &type, text, sizeof text) > 0)
      out->desc = text;
  }
  if (e->func_name)
    out->func = e->func_name;
  return 0;
}

} // namespace

std::string take_hdf5_error() {
  Innermost inner;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_first, &inner);
  H5Eclear2(H5E_DEFAULT);
  if (inner.desc.empty())
    return "";
  return inner.func.empty() ? inner.desc : inner.desc + " (in " + inner.func + ")";
}

} // namespace tessera::io::detail

namespace tessera::detail {

void throw_hdf5_error(const char* expr, const char* file, int line) {
  std::string why = io::detail::take_hdf5_error();
  if (why.empty())
    why = "no message on the HDF5 error stack";
  throw IoError(fmt::format("{} failed: {}", expr, why), file, line);
}

} // namespace tessera::detail

namespace tessera::io {

void HidTraits::destroy(hid_t id) noexcept {
  // After H5close (library shutdown at exit) every id is already gone.
  if (H5Iis_valid(id) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return;
  }
  herr_t rc = 0;
  switch (H5Iget_type(id)) {
  case H5I_FILE:
    rc = H5Fclose(id);
    break;
  case H5I_GROUP:
    rc = H5Gclose(id);
    break;
  case H5I_DATASET:
    rc = H5Dclose(id);
    break;
  case H5I_DATASPACE:
    rc = H5Sclose(id);
    break;
  case H5I_DATATYPE:
    rc = H5Tclose(id);
    break;
  case H5I_ATTR:
    rc = H5Aclose(id);
    break;
  case H5I_GENPROP_LST:
    rc = H5Pclose(id);
    break;
  default:
    rc = H5Idec_ref(id) < 0 ? -1 : 0;
    break;
  }
  if (rc < 0)
    log::warn("closing HDF5 object {} failed: {}", static_cast<long long>(id),
              detail::take_hdf5_error());
}

unique_hid checked_hid(hid_t id, const char* what, std::source_location where) {
  if (id < 0)
    ::tessera::detail::throw_hdf5_error(what, where.file_name(), static_cast<int>(where.line()));
  return unique_hid(id);
}

} // namespace tessera::io

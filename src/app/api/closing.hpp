// The library's entry points that open HDF5 files run through closing_after_error: an error all
// ranks agreed on can leave MPI-IO handles open (io/h5_file.hpp, ~H5File), and a library never
// reaches tessera's main, which closes them before MPI ends. Every rank is here together after
// such an error, so they are closed now; the application's MPI_Finalize then finds none.
#pragma once

#include <tessera/error.hpp>

#include "io/h5_file.hpp"

namespace tessera::api {

template <class F>
decltype(auto) closing_after_error(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.collective())
      (void)io::close_abandoned_files(); // one that fails says so (a warning)
    throw;
  }
}

} // namespace tessera::api

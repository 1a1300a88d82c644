// Layouts and redistribution plans as the Python module binds them (tessera._tessera.Layout,
// tessera._tessera.RedistributePlan); tessera/__init__.py wraps both so that layouts carry
// their mpi4py communicator.
#pragma once

#include <pybind11/pybind11.h>

#include <tessera/tessera.hpp>

#include <string>

namespace tessera::python {

void bind_redistribute(pybind11::module_& module);

// InputError unless `obj` is rank `rank`'s local block of l with dtype t: its shape, laid out as
// the layout says (C or Fortran order, the leading dimension). A rank that holds nothing may
// pass None or any empty array.
void check_local_block(const pybind11::object& obj, const Layout& l, int rank, DType t,
                       const std::string& name);

} // namespace tessera::python

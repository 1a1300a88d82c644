// Layouts and redistribution plans as the Python module binds them (tessera._tessera.Layout,
// tessera._tessera.RedistributePlan); tessera/__init__.py wraps both so that layouts carry
// their mpi4py communicator.
#pragma once

#include <pybind11/pybind11.h>

namespace tessera::python {

void bind_redistribute(pybind11::module_& module);

} // namespace tessera::python

// The heat2d solver as the Python module binds it: a field block in and out as numpy arrays.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <tessera/tessera.hpp>

#include "arrays.hpp"

namespace tessera::python {

class PyHeat2d {
public:
  PyHeat2d(MPI_Fint comm, const Heat2dSettings& s)
      : rank_(rank_of(comm_of(comm))), solver_(s, comm_of(comm)) {}
  void step(std::int64_t n) {
    py::gil_scoped_release release;
    solver_.step(n);
  }
  py::array read_field() {
    const auto& d = solver_.layout();
    py::array out = new_block(DType::f64, d.rows(rank_), d.global().cols);
    solver_.read_field(static_cast<double*>(out.mutable_data()));
    return out;
  }
  void write_field(const py::array& block) {
    const auto& d = solver_.layout();
    check_block(block, DType::f64, d.rows(rank_), d.global().cols, "the field block");
    solver_.write_field(static_cast<const double*>(block.data()));
  }
  py::dict diagnostics() {
    const Heat2dDiagnostics g = solver_.diagnostics();
    py::dict d;
    d["total"] = g.total;
    d["min"] = g.min;
    d["max"] = g.max;
    d["l2_error"] = g.l2_error;
    d["linf_error"] = g.linf_error;
    return d;
  }
  std::int64_t steps_done() const { return solver_.steps_done(); }
  double time() const { return solver_.time(); }
  const BlockDistribution& layout() const { return solver_.layout(); }

private:
  int rank_;
  Heat2dSolver solver_;
};

} // namespace tessera::python

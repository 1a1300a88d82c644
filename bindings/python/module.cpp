// The Python module tessera._tessera (pybind11, numpy arrays); tessera/__init__.py wraps it so
// that communicators are mpi4py objects. Arrays are checked before any collective call, so a
// wrong dtype, shape or a non-contiguous array raises on the rank that passed it, never crashes.
// (Every rank should pass the same kind of arrays: a rank that raises leaves the others waiting
// in the collective, as any MPI program would.)
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tessera/tessera.hpp>

#include <string>
#include <vector>

namespace py = pybind11;
using namespace tessera;

namespace {

[[noreturn]] void input_error(const std::string& message) {
  throw InputError(message, __FILE__, __LINE__);
}

std::string text(const py::object& o) {
  return o.attr("__str__")().cast<std::string>();
}

// The module is an application of libtessera.so, which exports only the public API (tessera's
// internal MPI helpers are not in it): the two MPI calls it makes itself are here.
MPI_Comm comm_of(MPI_Fint handle) {
  const MPI_Comm comm = MPI_Comm_f2c(handle);
  if (comm == MPI_COMM_NULL)
    input_error("the communicator handle " + std::to_string(handle) +
                " is MPI_COMM_NULL, expected a communicator");
  return comm;
}
int rank_of(MPI_Comm comm) {
  int rank = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    throw MpiError("MPI_Comm_rank failed on the communicator passed in", __FILE__, __LINE__);
  return rank;
}

DType dtype_of_object(const py::handle& obj) {
  if (py::isinstance<py::str>(obj)) {
    const auto s = obj.cast<std::string>();
    if (s == "f32" || s == "f64" || s == "c64" || s == "c128")
      return parse_dtype(s);
  }
  const py::dtype dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(obj));
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4)
    return DType::f32;
  if (kind == 'f' && size == 8)
    return DType::f64;
  if (kind == 'c' && size == 8)
    return DType::c64;
  if (kind == 'c' && size == 16)
    return DType::c128;
  input_error("dtype " + text(dt) +
              " is not one tessera handles: expected float32, float64, complex64 or complex128");
}

py::dtype numpy_dtype(DType t) {
  switch (t) {
  case DType::f32:
    return py::dtype::of<float>();
  case DType::f64:
    return py::dtype::of<double>();
  case DType::c64:
    return py::dtype::of<std::complex<float>>();
  case DType::c128:
    break;
  }
  return py::dtype::of<std::complex<double>>();
}

std::string shape_str(std::int64_t r, std::int64_t c) {
  return "(" + std::to_string(r) + ", " + std::to_string(c) + ")";
}

// The array must be a C-contiguous rows x cols array of dtype t, in native byte order.
void check_block(const py::array& a, DType t, std::int64_t rows, std::int64_t cols,
                 const char* what) {
  const std::string name = what;
  if (a.ndim() != 2 || a.shape(0) != rows || a.shape(1) != cols) {
    std::string got = "(";
    for (py::ssize_t k = 0; k < a.ndim(); ++k)
      got += (k ? ", " : "") + std::to_string(a.shape(k));
    got += a.ndim() == 1 ? ",)" : ")";
    input_error(name + " must have shape " + shape_str(rows, cols) + ", got " + got);
  }
  if (dtype_of_object(a.dtype()) != t || !a.dtype().attr("isnative").cast<bool>())
    input_error(name + " must have dtype " + text(numpy_dtype(t)) + " (native byte order), got " +
                text(a.dtype()));
  if (!(a.flags() & py::array::c_style))
    input_error(name + " must be C-contiguous: pass numpy.ascontiguousarray(" + name + ")");
}

py::array new_block(DType t, std::int64_t rows, std::int64_t cols) {
  return py::array(numpy_dtype(t), std::vector<py::ssize_t>{rows, cols});
}

class PyTransposePlan {
public:
  PyTransposePlan(const BlockDistribution& dist, const py::object& dtype, MPI_Fint comm,
                  const std::string& backend, const std::string& exchange)
      : rank_(rank_of(comm_of(comm))), dtype_(dtype_of_object(dtype)),
        plan_(dist, dtype_, comm_of(comm), parse_backend(backend),
              TransposeOptions{.algorithm = parse_exchange(exchange)}) {}

  py::array execute(const py::array& in) {
    const auto& d = plan_.input_distribution();
    check_block(in, dtype_, d.rows(rank_), d.global().cols, "the input block");
    const auto& o = plan_.output_distribution();
    py::array out = new_block(dtype_, o.rows(rank_), o.global().cols);
    const void* src = in.data();
    void* dst = out.mutable_data();
    {
      py::gil_scoped_release release;
      plan_.execute(src, dst);
    }
    return out;
  }
  const BlockDistribution& input_distribution() const { return plan_.input_distribution(); }
  const BlockDistribution& output_distribution() const { return plan_.output_distribution(); }
  std::string algorithm() const { return std::string(exchange_name(plan_.algorithm())); }
  std::string backend() const { return std::string(backend_name(plan_.backend())); }

private:
  int rank_;
  DType dtype_;
  TransposePlan plan_;
};

std::vector<Op> ops_of(const std::vector<std::string>& names) {
  if (names.empty())
    input_error(
        "ops must name at least one reduction (sum, min, max, mean, norm1, norm2, norminf)");
  std::vector<Op> ops;
  for (const auto& n : names)
    ops.push_back(parse_op(n));
  return ops;
}

class PyReducePlan {
public:
  PyReducePlan(const BlockDistribution& dist, const py::object& dtype, MPI_Fint comm,
               const std::vector<std::string>& ops, const std::string& axis,
               const std::string& backend)
      : rank_(rank_of(comm_of(comm))), dist_(dist), dtype_(dtype_of_object(dtype)), ops_(ops),
        plan_(dist, dtype_, comm_of(comm), parse_backend(backend), ops_of(ops), parse_axis(axis)) {}

  py::dict execute(const py::array& block) {
    check_block(block, dtype_, dist_.rows(rank_), dist_.global().cols, "the block");
    ReduceResult r;
    const void* src = block.data();
    {
      py::gil_scoped_release release;
      r = plan_.execute(src);
    }
    return to_dict(r, ops_);
  }

  static py::dict to_dict(const ReduceResult& r, const std::vector<std::string>& names) {
    py::dict d;
    for (std::size_t k = 0; k < r.ops.size(); ++k) {
      const auto& v = r.values[k];
      const std::string key(op_name(r.ops[k]));
      if (r.axis == Axis::All)
        d[key.c_str()] = v.at(0);
      else
        d[key.c_str()] = py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
    }
    (void)names;
    return d;
  }

private:
  int rank_;
  BlockDistribution dist_;
  DType dtype_;
  std::vector<std::string> ops_;
  ReducePlan plan_;
};

py::array h5_read_rows(const std::string& file, const std::string& dataset,
                       const BlockDistribution& dist, const py::object& dtype, MPI_Fint comm) {
  const MPI_Comm c = comm_of(comm);
  const DType t = dtype_of_object(dtype);
  py::array out = new_block(t, dist.rows(rank_of(c)), dist.global().cols);
  void* dst = out.mutable_data();
  {
    py::gil_scoped_release release;
    h5::read_rows(file, dataset, dist, t, dst, c);
  }
  return out;
}

void h5_write_rows(const std::string& file, const std::string& dataset,
                   const BlockDistribution& dist, const py::array& block, MPI_Fint comm) {
  const MPI_Comm c = comm_of(comm);
  const DType t = dtype_of_object(block.dtype());
  check_block(block, t, dist.rows(rank_of(c)), dist.global().cols, "the block");
  const void* src = block.data();
  py::gil_scoped_release release;
  h5::write_rows(file, dataset, dist, t, src, c);
}

py::tuple h5_inspect(const std::string& file, const std::string& dataset, MPI_Fint comm) {
  const h5::DatasetInfo info = h5::inspect(file, dataset, comm_of(comm));
  return py::make_tuple(py::make_tuple(info.shape.rows, info.shape.cols), numpy_dtype(info.dtype));
}

OutOfCoreOptions ooc_options(std::size_t memory_limit, const std::string& backend) {
  OutOfCoreOptions o;
  o.memory_limit = memory_limit;
  o.backend = parse_backend(backend);
  return o;
}

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

} // namespace

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "tessera: distributed transpose, reductions, HDF5 I/O and the heat2d solver";
  auto error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<InputError>(m, "InputError", error.ptr());
  py::register_exception<IoError>(m, "IoError", error.ptr());
  py::register_exception<MpiError>(m, "MpiError", error.ptr());
  py::register_exception<NotCompiled>(m, "NotCompiled", error.ptr());
  py::register_exception<ResourceError>(m, "ResourceError", error.ptr());
  m.def("version", [] { return std::string(version()); });
  m.def(
      "set_log_level",
      [](const std::string& level) {
        static const std::pair<const char*, LogLevel> levels[] = {{"off", LogLevel::Off},
                                                                  {"error", LogLevel::Error},
                                                                  {"warn", LogLevel::Warn},
                                                                  {"info", LogLevel::Info},
                                                                  {"debug", LogLevel::Debug}};
        for (const auto& [name, l] : levels)
          if (level == name)
            return set_log_level(l);
        input_error("log level must be off, error, warn, info or debug, got '" + level + "'");
      },
      py::arg("level"));

  py::class_<BlockDistribution>(m, "BlockDistribution")
      .def(py::init([](std::pair<std::int64_t, std::int64_t> shape, int nranks) {
             return BlockDistribution({shape.first, shape.second}, nranks);
           }),
           py::arg("shape"), py::arg("nranks"))
      .def_property_readonly("shape",
                             [](const BlockDistribution& d) {
                               return py::make_tuple(d.global().rows, d.global().cols);
                             })
      .def_property_readonly("nranks", &BlockDistribution::nranks)
      .def("begin", &BlockDistribution::begin, py::arg("rank"))
      .def("end", &BlockDistribution::end, py::arg("rank"))
      .def("rows", &BlockDistribution::rows, py::arg("rank"))
      .def("transposed", &BlockDistribution::transposed)
      .def("__repr__", [](const BlockDistribution& d) {
        return "BlockDistribution(" + shape_str(d.global().rows, d.global().cols) + ", " +
               std::to_string(d.nranks()) + ")";
      });

  py::class_<PyTransposePlan>(m, "TransposePlan")
      .def(py::init<const BlockDistribution&, const py::object&, MPI_Fint, const std::string&,
                    const std::string&>(),
           py::arg("dist"), py::arg("dtype"), py::arg("comm"), py::arg("backend") = "auto",
           py::arg("exchange") = "auto")
      .def("execute", &PyTransposePlan::execute, py::arg("block"))
      .def_property_readonly("input_distribution", &PyTransposePlan::input_distribution)
      .def_property_readonly("output_distribution", &PyTransposePlan::output_distribution)
      .def_property_readonly("algorithm", &PyTransposePlan::algorithm)
      .def_property_readonly("backend", &PyTransposePlan::backend);

  py::class_<PyReducePlan>(m, "ReducePlan")
      .def(py::init<const BlockDistribution&, const py::object&, MPI_Fint,
                    const std::vector<std::string>&, const std::string&, const std::string&>(),
           py::arg("dist"), py::arg("dtype"), py::arg("comm"), py::arg("ops"),
           py::arg("axis") = "all", py::arg("backend") = "auto")
      .def("execute", &PyReducePlan::execute, py::arg("block"));

  m.def("h5_read_rows", &h5_read_rows);
  m.def("h5_write_rows", &h5_write_rows);
  m.def("h5_inspect", &h5_inspect);
  m.def("transpose_out_of_core", [](const std::string& in_file, const std::string& in_ds,
                                    const std::string& out_file, const std::string& out_ds,
                                    MPI_Fint comm, std::size_t memory_limit,
                                    const std::string& backend) {
    const MPI_Comm c = comm_of(comm);
    py::gil_scoped_release release;
    transpose_out_of_core(in_file, in_ds, out_file, out_ds, c, ooc_options(memory_limit, backend));
  });
  m.def("reduce_out_of_core", [](const std::string& file, const std::string& ds, MPI_Fint comm,
                                 const std::vector<std::string>& ops, const std::string& axis,
                                 std::size_t memory_limit, const std::string& backend) {
    const MPI_Comm c = comm_of(comm);
    const auto o = ops_of(ops);
    const Axis a = parse_axis(axis);
    ReduceResult r;
    {
      py::gil_scoped_release release;
      r = reduce_out_of_core(file, ds, o, a, c, ooc_options(memory_limit, backend));
    }
    return PyReducePlan::to_dict(r, ops);
  });

  py::class_<Heat2dSettings>(m, "Heat2dSettings")
      .def(py::init<>())
      .def_readwrite("nx", &Heat2dSettings::nx)
      .def_readwrite("ny", &Heat2dSettings::ny)
      .def_readwrite("lx", &Heat2dSettings::lx)
      .def_readwrite("ly", &Heat2dSettings::ly)
      .def_readwrite("alpha", &Heat2dSettings::alpha)
      .def_readwrite("dt", &Heat2dSettings::dt)
      .def_readwrite("boundary_value", &Heat2dSettings::boundary_value)
      .def_readwrite("width", &Heat2dSettings::width)
      .def_property(
          "periodic",
          [](const Heat2dSettings& s) { return s.boundary == Heat2dBoundary::Periodic; },
          [](Heat2dSettings& s, bool p) {
            s.boundary = p ? Heat2dBoundary::Periodic : Heat2dBoundary::Dirichlet;
          })
      .def_property(
          "gaussian", [](const Heat2dSettings& s) { return s.initial == Heat2dInitial::Gaussian; },
          [](Heat2dSettings& s, bool g) {
            s.initial = g ? Heat2dInitial::Gaussian : Heat2dInitial::Sine;
          })
      .def_property(
          "backend", [](const Heat2dSettings& s) { return std::string(backend_name(s.backend)); },
          [](Heat2dSettings& s, const std::string& b) { s.backend = parse_backend(b); });

  py::class_<PyHeat2d>(m, "Heat2dSolver")
      .def(py::init<MPI_Fint, const Heat2dSettings&>(), py::arg("comm"), py::arg("settings"))
      .def("step", &PyHeat2d::step, py::arg("steps") = 1)
      .def("read_field", &PyHeat2d::read_field)
      .def("write_field", &PyHeat2d::write_field, py::arg("block"))
      .def("diagnostics", &PyHeat2d::diagnostics)
      .def_property_readonly("steps_done", &PyHeat2d::steps_done)
      .def_property_readonly("time", &PyHeat2d::time)
      .def_property_readonly("layout", &PyHeat2d::layout);
}

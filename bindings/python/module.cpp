// The Python module tessera._tessera (pybind11; numpy arrays, and device arrays through the
// __cuda_array_interface__ on the CUDA backend); tessera/__init__.py wraps it so that
// communicators are mpi4py objects. Arrays are checked before any collective call, and the ranks
// agree on the checks (check_on_every_rank): a wrong dtype, shape or a non-contiguous array on
// one rank raises on every rank, naming that rank, never crashes nor hangs.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tessera/tessera.hpp>

#include "arrays.hpp"
#include "heat2d_solver.hpp"
#include "permute_plan.hpp"
#include "redistribute.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace tessera;

namespace {

using namespace tessera::python;

// The host plan (numpy arrays) is built with the object; the device plan (Memory::Device) on the
// first execute that gets device arrays. Building a plan is collective, so every rank must pass
// the same kind of arrays to a given execute.
class PyTransposePlan {
public:
  PyTransposePlan(const BlockDistribution& dist, const py::object& dtype, MPI_Fint comm,
                  const std::string& backend, const std::string& exchange)
      : comm_(comm_of(comm)), rank_(rank_of(comm_)), dtype_(dtype_of_object(dtype)),
        exchange_(parse_exchange(exchange)), dist_(dist),
        plan_(dist, dtype_, comm_, parse_backend(backend),
              TransposeOptions{.algorithm = exchange_}) {}

  py::object execute(const py::object& in, const py::object& out) {
    if (is_device_array(in))
      return execute_device(in, out);
    const auto& d = plan_.input_distribution();
    const auto& o = plan_.output_distribution();
    py::array a, result;
    // Agreed: a rank whose arrays are wrong raises, and so do the others, naming it.
    check_on_every_rank(comm_, [&] {
      a = host_array(in, "the input block");
      check_block(a, dtype_, d.rows(rank_), d.global().cols, "the input block");
      if (is_device_array(out))
        input_error("out is a device array but the input block is a numpy array: pass both in "
                    "host memory (numpy) or both in device memory");
      if (out.is_none()) {
        result = new_block(dtype_, o.rows(rank_), o.global().cols);
      } else {
        result = host_array(out, "out");
        check_block(result, dtype_, o.rows(rank_), o.global().cols, "out");
        check_out_apart(a, result);
      }
    });
    const void* src = a.data();
    void* dst = result.mutable_data();
    {
      py::gil_scoped_release release;
      plan_.execute(src, dst);
    }
    last_device_ = false;
    return result;
  }
  const BlockDistribution& input_distribution() const { return plan_.input_distribution(); }
  const BlockDistribution& output_distribution() const { return plan_.output_distribution(); }
  // The exchange of the plan that ran last (host or device: each resolves Auto on its own).
  std::string algorithm() const {
    return std::string(exchange_name(last_device_ ? device_->algorithm() : plan_.algorithm()));
  }
  std::string backend() const { return std::string(backend_name(plan_.backend())); }

private:
  py::object execute_device(const py::object& in, const py::object& out) {
    const auto& d = plan_.input_distribution();
    const auto& o = plan_.output_distribution();
    DeviceArray src, dst;
    py::object result = out;
    check_on_every_rank(comm_, [&] {
      require_cuda(plan_.backend(), "the input block");
      src = device_array(in, dtype_, d.rows(rank_), d.global().cols, "the input block");
      if (out.is_none()) {
        const py::object cupy = import_cupy(
            "the input block is a device array and CuPy, which would allocate the output, is not "
            "installed: pass out= (a writable device array of shape " +
            shape_str(o.rows(rank_), o.global().cols) + " and dtype " + text(numpy_dtype(dtype_)) +
            ")");
        result =
            cupy.attr("empty")(py::make_tuple(o.rows(rank_), o.global().cols), numpy_dtype(dtype_));
      } else if (!is_device_array(out)) {
        input_error("the input block is a device array but out is a " + type_name(out) +
                    ": pass out= as a device array (__cuda_array_interface__) too");
      }
      dst = device_array(result, dtype_, o.rows(rank_), o.global().cols, "out");
      if (dst.readonly)
        input_error("out is read-only (its __cuda_array_interface__ data says readonly), "
                    "expected a writable array");
      if (overlap(src.ptr, src.bytes, dst.ptr, dst.bytes))
        input_error("out overlaps the input block, expected separate memory");
    });
    wait_for_stream(src, "the input block");
    wait_for_stream(dst, "out");
    {
      py::gil_scoped_release release;
      if (!device_)
        device_.emplace(dist_, dtype_, comm_, Backend::Cuda,
                        TransposeOptions{.algorithm = exchange_, .memory = Memory::Device});
      device_->execute(reinterpret_cast<const void*>(src.ptr), reinterpret_cast<void*>(dst.ptr));
    }
    last_device_ = true;
    return result;
  }

  MPI_Comm comm_; // kept alive by the Python object (tessera/__init__.py)
  int rank_;
  DType dtype_;
  Exchange exchange_;
  BlockDistribution dist_;
  TransposePlan plan_;
  std::optional<TransposePlan> device_;
  bool last_device_ = false;
};

std::vector<Op> ops_of(const std::vector<std::string>& names) {
  if (names.empty())
    input_error("ops must name at least one reduction (sum, min, max, mean, norm1, norm2, norminf, "
                "count)");
  std::vector<Op> ops;
  for (const auto& n : names)
    ops.push_back(parse_op(n));
  return ops;
}

ReduceOptions host_options(bool skip_nan) {
  ReduceOptions o;
  o.missing.skip_nan = skip_nan;
  return o;
}

// As PyTransposePlan: the device plan is built on the first execute given a device array.
class PyReducePlan {
public:
  PyReducePlan(const BlockDistribution& dist, const py::object& dtype, MPI_Fint comm,
               const std::vector<std::string>& ops, const std::string& axis,
               const std::string& backend, bool skip_nan)
      : comm_(comm_of(comm)), rank_(rank_of(comm_)), dist_(dist), dtype_(dtype_of_object(dtype)),
        ops_(ops_of(ops)), axis_(parse_axis(axis)),
        plan_(dist, dtype_, comm_, parse_backend(backend), ops_, axis_, host_options(skip_nan)) {}
  // Over a matrix in any layout: numpy local blocks of it (tessera/reduce_plan.hpp).
  PyReducePlan(const Layout& layout, const py::object& dtype, MPI_Fint comm,
               const std::vector<std::string>& ops, const std::string& axis,
               const std::string& backend, bool skip_nan)
      : comm_(comm_of(comm)), rank_(rank_of(comm_)), dist_(layout.global(), layout.nranks()),
        dtype_(dtype_of_object(dtype)), ops_(ops_of(ops)), axis_(parse_axis(axis)), layout_(layout),
        plan_(layout, dtype_, comm_, parse_backend(backend), ops_, axis_, host_options(skip_nan)) {}

  py::dict execute(const py::object& block) {
    const std::int64_t rows = dist_.rows(rank_), cols = dist_.global().cols;
    const void* src = nullptr;
    ReducePlan* plan = &plan_;
    DeviceArray dev;
    check_on_every_rank(comm_, [&] {
      if (layout_) {
        if (is_device_array(block))
          input_error("a plan over a tessera.Layout reduces numpy local blocks (host memory), "
                      "got a device array: copy it to the host first");
        check_local_block(block, *layout_, rank_, dtype_, "the block");
        if (!block.is_none() && py::reinterpret_borrow<py::array>(block).size() > 0)
          src = py::reinterpret_borrow<py::array>(block).data();
      } else if (is_device_array(block)) {
        require_cuda(plan_.backend(), "the block");
        dev = device_array(block, dtype_, rows, cols, "the block");
        plan = nullptr; // the device plan, built below without the GIL
      } else {
        const py::array a = host_array(block, "the block");
        check_block(a, dtype_, rows, cols, "the block");
        src = a.data(); // block keeps the array alive
      }
    });
    if (plan == nullptr) {
      wait_for_stream(dev, "the block");
      src = reinterpret_cast<const void*>(dev.ptr);
    }
    ReduceResult r;
    {
      py::gil_scoped_release release;
      if (plan == nullptr) {
        if (!device_)
          device_.emplace(dist_, dtype_, comm_, Backend::Cuda, ops_, axis_,
                          ReduceOptions{.memory = Memory::Device});
        plan = &*device_;
      }
      r = plan->execute(src);
    }
    return to_dict(r);
  }
  std::string backend() const { return std::string(backend_name(plan_.backend())); }

  static py::dict to_dict(const ReduceResult& r) {
    py::dict d;
    for (std::size_t k = 0; k < r.ops.size(); ++k) {
      const auto& v = r.values[k];
      const std::string key(op_name(r.ops[k]));
      if (r.axis == Axis::All)
        d[key.c_str()] = v.at(0);
      else
        d[key.c_str()] = py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
    }
    return d;
  }

private:
  MPI_Comm comm_; // kept alive by the Python object (tessera/__init__.py)
  int rank_;
  BlockDistribution dist_;
  DType dtype_;
  std::vector<Op> ops_;
  Axis axis_;
  std::optional<Layout> layout_; // plans over a layout
  ReducePlan plan_;
  std::optional<ReducePlan> device_;
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
  DType t{};
  check_on_every_rank(c, [&] {
    t = dtype_of_object(block.dtype());
    check_block(block, t, dist.rows(rank_of(c)), dist.global().cols, "the block");
  });
  const void* src = block.data();
  py::gil_scoped_release release;
  h5::write_rows(file, dataset, dist, t, src, c);
}

py::tuple h5_inspect(const std::string& file, const std::string& dataset, MPI_Fint comm) {
  const h5::DatasetInfo info = h5::inspect(file, dataset, comm_of(comm));
  return py::make_tuple(py::make_tuple(info.shape.rows, info.shape.cols), numpy_dtype(info.dtype));
}

OutOfCoreOptions ooc_options(std::size_t memory_limit, const std::string& backend,
                             bool keep_nan = false) {
  OutOfCoreOptions o;
  o.memory_limit = memory_limit;
  o.backend = parse_backend(backend);
  o.keep_nan = keep_nan;
  return o;
}

} // namespace

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "tessera: distributed transpose, permutations of dimensions, reductions, HDF5 I/O and "
            "the heat2d solver";
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
      .def("execute", &PyTransposePlan::execute, py::arg("block"), py::arg("out") = py::none())
      .def_property_readonly("input_distribution", &PyTransposePlan::input_distribution)
      .def_property_readonly("output_distribution", &PyTransposePlan::output_distribution)
      .def_property_readonly("algorithm", &PyTransposePlan::algorithm)
      .def_property_readonly("backend", &PyTransposePlan::backend);

  py::class_<PyReducePlan>(m, "ReducePlan")
      .def(
          py::init<const BlockDistribution&, const py::object&, MPI_Fint,
                   const std::vector<std::string>&, const std::string&, const std::string&, bool>(),
          py::arg("dist"), py::arg("dtype"), py::arg("comm"), py::arg("ops"),
          py::arg("axis") = "all", py::arg("backend") = "auto", py::arg("skip_nan") = false)
      .def(py::init<const Layout&, const py::object&, MPI_Fint, const std::vector<std::string>&,
                    const std::string&, const std::string&, bool>(),
           py::arg("layout"), py::arg("dtype"), py::arg("comm"), py::arg("ops"),
           py::arg("axis") = "all", py::arg("backend") = "auto", py::arg("skip_nan") = false)
      .def("execute", &PyReducePlan::execute, py::arg("block"))
      .def_property_readonly("backend", &PyReducePlan::backend);
  py::class_<PyPermutePlan>(m, "PermutePlan")
      .def(py::init<std::vector<std::int64_t>, std::vector<int>, const py::object&, MPI_Fint,
                    const std::string&, bool>(),
           py::arg("shape"), py::arg("axes"), py::arg("dtype"), py::arg("comm"),
           py::arg("backend") = "auto", py::arg("device") = false)
      .def("execute", &PyPermutePlan::execute, py::arg("block"), py::arg("out") = py::none())
      .def_property_readonly("input_shape", &PyPermutePlan::input_shape)
      .def_property_readonly("output_shape", &PyPermutePlan::output_shape)
      .def_property_readonly("axes", &PyPermutePlan::axes)
      .def_property_readonly("input_block_shape", &PyPermutePlan::input_block_shape)
      .def_property_readonly("output_block_shape", &PyPermutePlan::output_block_shape)
      .def_property_readonly("input_slice", &PyPermutePlan::input_slice)
      .def_property_readonly("output_slice", &PyPermutePlan::output_slice)
      .def_property_readonly("dtype", &PyPermutePlan::dtype)
      .def_property_readonly("backend", &PyPermutePlan::backend);
  bind_redistribute(m);
  // The checks execute applies to a device array, alone (they touch no memory): (pointer,
  // readonly, the stream to wait for or 0).
  m.def(
      "_device_array_info",
      [](const py::object& obj, const py::object& dtype, const std::vector<std::int64_t>& shape,
         const std::string& name) {
        if (!is_device_array(obj))
          input_error(name + " has no __cuda_array_interface__");
        const DeviceArray a = device_array(obj, any_dtype_of_object(dtype), shape, name);
        return py::make_tuple(a.ptr, a.readonly, a.stream);
      },
      py::arg("obj"), py::arg("dtype"), py::arg("shape"), py::arg("name") = "the block");

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
  m.def("reduce_out_of_core",
        [](const std::string& file, const std::string& ds, MPI_Fint comm,
           const std::vector<std::string>& ops, const std::string& axis, std::size_t memory_limit,
           const std::string& backend, bool keep_nan) {
          const MPI_Comm c = comm_of(comm);
          const auto o = ops_of(ops);
          const Axis a = parse_axis(axis);
          ReduceResult r;
          {
            py::gil_scoped_release release;
            r = reduce_out_of_core(file, ds, o, a, c, ooc_options(memory_limit, backend, keep_nan));
          }
          return PyReducePlan::to_dict(r);
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

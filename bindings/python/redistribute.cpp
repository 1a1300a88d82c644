// tessera._tessera.Layout and RedistributePlan (bindings/python/redistribute.hpp). A local block
// is a 2-D numpy array of the layout's local shape: C-ordered for a row-major layout, Fortran-
// ordered for a column-major one (ScaLAPACK's), and with a leading dimension larger than the
// tight one a view into the padded buffer (buffer[:rows, :] of an (lld, cols) Fortran array).
#include "redistribute.hpp"

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <tessera/tessera.hpp>

#include "arrays.hpp"

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tessera::python {

namespace {

using Pair = std::pair<std::int64_t, std::int64_t>;

StorageOrder storage_of(const std::string& order) {
  if (order == "C" || order == "c")
    return StorageOrder::RowMajor;
  if (order == "F" || order == "f")
    return StorageOrder::ColMajor;
  input_error("order must be \"C\" (row-major local blocks) or \"F\" (column-major, as "
              "ScaLAPACK's), got \"" +
              order + "\"");
}

GridOrder grid_order_of(const std::string& order) {
  if (order == "row" || order == "R" || order == "r")
    return GridOrder::RowMajor;
  if (order == "col" || order == "C" || order == "c")
    return GridOrder::ColMajor;
  input_error("grid_order must be \"row\" (rank p * pc + q at grid position (p, q), BLACS's "
              "default) or \"col\" (rank q * pr + p), got \"" +
              order + "\"");
}

MatrixOp matrix_op_of(const std::string& op) {
  if (op == "N" || op == "n")
    return MatrixOp::None;
  if (op == "T" || op == "t")
    return MatrixOp::Transpose;
  if (op == "C" || op == "c" || op == "H" || op == "h")
    return MatrixOp::ConjTranspose;
  input_error("op must be \"N\" (none), \"T\" (transpose) or \"C\" (conjugate transpose; \"H\" "
              "also), got \"" +
              op + "\"");
}

std::string order_name(StorageOrder s) {
  return s == StorageOrder::RowMajor ? "C" : "F";
}

std::string layout_repr(const Layout& l) {
  return "Layout(" + shape_str(l.global().rows, l.global().cols) + ", " +
         std::to_string(l.nranks()) + " ranks, " + std::to_string(l.block_rows()) + " x " +
         std::to_string(l.block_cols()) + " blocks, order \"" + order_name(l.storage()) + "\")";
}

// Rank r's local block, as a new array (padded to the leading dimension where it is larger).
py::array new_local_block(const Layout& l, int rank, DType t) {
  const Shape s = l.local_shape(rank);
  const std::int64_t ld = l.leading_dimension(rank);
  const bool row_major = l.storage() == StorageOrder::RowMajor;
  const std::int64_t tight = row_major ? s.cols : s.rows;
  const py::module_ numpy = py::module_::import("numpy");
  const py::object all = py::slice(py::none(), py::none(), py::none());
  if (s.empty() || ld <= tight)
    return numpy
        .attr("empty")(py::make_tuple(s.rows, s.cols), numpy_dtype(t), row_major ? "C" : "F")
        .cast<py::array>();
  if (row_major) {
    const py::object buffer = numpy.attr("empty")(py::make_tuple(s.rows, ld), numpy_dtype(t), "C");
    return buffer[py::make_tuple(all, py::slice(0, s.cols, 1))].cast<py::array>();
  }
  const py::object buffer = numpy.attr("empty")(py::make_tuple(ld, s.cols), numpy_dtype(t), "F");
  return buffer[py::make_tuple(py::slice(0, s.rows, 1), all)].cast<py::array>();
}

// The first element's address and the bytes the block spans (its leading dimension included).
std::pair<std::uintptr_t, std::size_t> span_of(const py::object& obj) {
  if (obj.is_none())
    return {0, 0};
  const py::array a = py::reinterpret_borrow<py::array>(obj);
  if (a.size() == 0)
    return {0, 0};
  std::size_t bytes = static_cast<std::size_t>(a.itemsize());
  for (py::ssize_t k = 0; k < a.ndim(); ++k)
    bytes += static_cast<std::size_t>((a.shape(k) - 1) * a.strides(k));
  return {reinterpret_cast<std::uintptr_t>(a.data()), bytes};
}

// The interface of a 2-D device array's transpose (shape and strides swapped), so that a
// Fortran-ordered block is checked as a C-contiguous one; anything else is left for
// device_array to report.
py::object transposed_interface(const py::object& obj, DType t) {
  const py::object cai = obj.attr("__cuda_array_interface__");
  if (!py::isinstance<py::dict>(cai))
    return obj;
  py::dict d = cai.attr("copy")();
  const py::object shape = d.contains("shape") ? py::object(d["shape"]) : py::none();
  if (!py::isinstance<py::tuple>(shape) || py::len(shape) != 2)
    return obj;
  const auto dims = shape.cast<std::vector<py::object>>();
  d["shape"] = py::make_tuple(dims[1], dims[0]);
  const py::object strides = d.contains("strides") ? py::object(d["strides"]) : py::none();
  if (strides.is_none()) { // C-contiguous: the transpose steps by one element down its rows
    const auto item = static_cast<std::int64_t>(dtype_size(t));
    d["strides"] = py::make_tuple(item, dims[1].cast<std::int64_t>() * item);
  } else if (py::isinstance<py::tuple>(strides) && py::len(strides) == 2) {
    const auto st = strides.cast<std::vector<py::object>>();
    d["strides"] = py::make_tuple(st[1], st[0]);
  }
  py::dict attrs;
  attrs["__cuda_array_interface__"] = d;
  return py::module_::import("types").attr("SimpleNamespace")(**attrs);
}

// A device array (__cuda_array_interface__) as rank r's local block of l: the layout's order,
// tightly (a column-major block is checked as its transpose, C-contiguous). None where the rank
// holds nothing.
DeviceArray device_local_block(const py::object& obj, const Layout& l, int rank, DType t,
                               const std::string& name) {
  const Shape s = l.local_shape(rank);
  if (obj.is_none()) {
    if (!s.empty())
      input_error(name + " is None, but this rank's local block is " + shape_str(s.rows, s.cols) +
                  ": pass a device array");
    return {};
  }
  if (!is_device_array(obj))
    input_error(name + " is a " + type_name(obj) +
                ", but the other block is a device array: pass both in host memory (numpy) or "
                "both in device memory");
  const bool row_major = l.storage() == StorageOrder::RowMajor;
  const std::int64_t tight = row_major ? s.cols : s.rows;
  if (!s.empty() && l.leading_dimension(rank) > tight)
    input_error(name +
                ": device arrays must be tight local blocks, but this layout's leading "
                "dimension is " +
                std::to_string(l.leading_dimension(rank)) + " for " + std::to_string(tight) +
                (row_major ? " columns" : " rows") + "; pass numpy arrays");
  if (row_major)
    return device_array(obj, t, s.rows, s.cols, name + " (C-ordered)");
  return device_array(transposed_interface(obj, t), t, s.cols, s.rows,
                      name + " (Fortran-ordered), transposed,");
}

class PyRedistributePlan {
public:
  PyRedistributePlan(const Layout& a, const Layout& b, const py::object& dtype,
                     const std::string& op, Pair a_corner, Pair b_corner, std::optional<Pair> shape,
                     bool relabel, std::int64_t max_buffer_bytes, const std::string& backend,
                     MPI_Fint comm)
      : comm_(comm_of(comm)), rank_(rank_of(comm_)), a_(a), b_given_(b),
        dtype_(dtype_of_object(dtype)),
        options_(options_of(op, a_corner, b_corner, shape, relabel, max_buffer_bytes)),
        backend_(parse_backend(backend)), plan_(a, b, dtype_, comm_, backend_, options_),
        b_(plan_.target()) {}

  py::object execute(const py::object& in, const py::object& out, std::complex<double> alpha,
                     std::complex<double> beta) {
    // Ranks that hold nothing may pass None: the ranks agree whether any passed a device array.
    int device = is_device_array(in) || is_device_array(out) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &device, 1, MPI_INT, MPI_MAX, comm_);
    if (device)
      return execute_device(in, out, alpha, beta);
    py::object result = out;
    check_on_every_rank(comm_, [&] {
      if (dtype_is_real(dtype_) && (alpha.imag() != 0 || beta.imag() != 0))
        input_error("alpha and beta must be real for a real dtype (" + text(numpy_dtype(dtype_)) +
                    "), got alpha = " + text(py::cast(alpha)) + ", beta = " + text(py::cast(beta)));
      check_local_block(in, a_, rank_, dtype_, "the input block");
      if (out.is_none()) {
        if (beta != 0.0)
          input_error("beta = " + text(py::cast(beta)) +
                      " updates B, which needs out= (this rank's local block of B)");
        result = new_local_block(b_, rank_, dtype_);
      } else {
        check_local_block(out, b_, rank_, dtype_, "out");
        if (!py::reinterpret_borrow<py::array>(out).writeable())
          input_error("out is read-only, expected a writable array");
        const auto [ia, na] = span_of(in);
        const auto [ib, nb] = span_of(out);
        if (overlap(ia, na, ib, nb))
          input_error("out overlaps the input block, expected separate memory");
      }
    });
    const auto data = [](const py::object& o, bool write) -> void* {
      if (o.is_none())
        return nullptr;
      auto a = py::reinterpret_borrow<py::array>(o);
      if (a.size() == 0)
        return nullptr;
      return write ? a.mutable_data() : const_cast<void*>(a.data());
    };
    const void* src = data(in, false);
    void* dst = data(result, true);
    {
      py::gil_scoped_release release;
      plan_.execute(src, dst, alpha, beta);
    }
    return result;
  }

  py::dtype dtype() const { return numpy_dtype(dtype_); }
  std::string backend() const { return std::string(backend_name(plan_.backend())); }
  py::dict traffic() const {
    const RedistributeTraffic& t = plan_.traffic();
    py::dict d;
    d["sent"] = t.sent;
    d["received"] = t.received;
    d["kept"] = t.kept;
    d["sent_lower_bound"] = t.sent_lower_bound;
    d["buffer_bytes"] = t.buffer_bytes;
    d["rounds"] = t.rounds;
    return d;
  }
  const Layout& target() const { return b_; }
  const std::vector<int>& relabelling() const { return plan_.relabelling(); }

private:
  static RedistributeOptions options_of(const std::string& op, Pair a_corner, Pair b_corner,
                                        std::optional<Pair> shape, bool relabel,
                                        std::int64_t max_buffer_bytes) {
    RedistributeOptions o;
    o.relabel = relabel;
    o.max_buffer_bytes = max_buffer_bytes;
    o.op = matrix_op_of(op);
    std::tie(o.a_row, o.a_col) = a_corner;
    std::tie(o.b_row, o.b_col) = b_corner;
    if (shape)
      std::tie(o.rows, o.cols) = *shape;
    return o;
  }

  // Device arrays: the device plan (Memory::Device), built on the first such execute
  // (collective: every rank gets here together).
  py::object execute_device(const py::object& in, const py::object& out, std::complex<double> alpha,
                            std::complex<double> beta) {
    DeviceArray src, dst;
    py::object result = out;
    check_on_every_rank(comm_, [&] {
      if (backend_ == Backend::Cpu)
        input_error("device arrays (__cuda_array_interface__) need a plan with backend=\"cuda\" "
                    "or \"auto\", this plan's backend is \"cpu\" (or pass numpy arrays)");
      if (dtype_is_real(dtype_) && (alpha.imag() != 0 || beta.imag() != 0))
        input_error("alpha and beta must be real for a real dtype (" + text(numpy_dtype(dtype_)) +
                    "), got alpha = " + text(py::cast(alpha)) + ", beta = " + text(py::cast(beta)));
      src = device_local_block(in, a_, rank_, dtype_, "the input block");
      if (out.is_none()) {
        if (beta != 0.0)
          input_error("beta = " + text(py::cast(beta)) +
                      " updates B, which needs out= (this rank's local block of B)");
        const Shape s = b_.local_shape(rank_);
        const py::object cupy = import_cupy(
            "the input block is a device array and CuPy, which would allocate the output, is not "
            "installed: pass out= (a writable device array of shape " +
            shape_str(s.rows, s.cols) + " and dtype " + text(numpy_dtype(dtype_)) + ")");
        result = cupy.attr("empty")(py::make_tuple(s.rows, s.cols), numpy_dtype(dtype_),
                                    b_.storage() == StorageOrder::RowMajor ? "C" : "F");
      }
      dst = device_local_block(result, b_, rank_, dtype_, "out");
      if (dst.readonly)
        input_error("out is read-only (its __cuda_array_interface__ data says readonly), "
                    "expected a writable array");
      if (src.bytes != 0 && dst.bytes != 0 && src.ptr < dst.ptr + dst.bytes &&
          dst.ptr < src.ptr + src.bytes)
        input_error("out overlaps the input block, expected separate memory");
    });
    if (!device_) {
      RedistributeOptions o = options_;
      o.memory = Memory::Device;
      device_.emplace(a_, b_given_, dtype_, comm_, Backend::Cuda, o);
    }
    wait_for_stream(src, "the input block");
    wait_for_stream(dst, "out");
    const auto* a = src.bytes == 0 ? nullptr : reinterpret_cast<const void*>(src.ptr);
    auto* b = dst.bytes == 0 ? nullptr : reinterpret_cast<void*>(dst.ptr);
    {
      py::gil_scoped_release release;
      device_->execute(a, b, alpha, beta);
    }
    return result;
  }

  MPI_Comm comm_; // kept alive by the Python object (tessera/__init__.py)
  int rank_;
  Layout a_;
  Layout b_given_; // B's layout as given (the device plan relabels it alike)
  DType dtype_;
  RedistributeOptions options_;
  Backend backend_; // as asked for
  RedistributePlan plan_;
  Layout b_; // the layout execute writes: B's, or relabelled
  std::optional<RedistributePlan> device_;
};

// h5::read_layout and h5::write_layout (tessera.read_hdf5, tessera.write_hdf5): local blocks as
// the redistributions take them.
py::array h5_read_layout(const std::string& file, const std::string& dataset, const Layout& l,
                         const py::object& dtype, std::int64_t memory_limit, MPI_Fint comm) {
  const MPI_Comm c = comm_of(comm);
  DType t{};
  py::array out;
  check_on_every_rank(c, [&] {
    t = dtype_of_object(dtype);
    out = new_local_block(l, rank_of(c), t);
    // Zeros, not what the allocation held, where the local block holds no element of the
    // matrix (a grid layout's rank owning some blocks of a block row but not others).
    out.attr("fill")(0);
  });
  void* dst = out.size() == 0 ? nullptr : out.mutable_data();
  {
    py::gil_scoped_release release;
    h5::read_layout(file, dataset, l, t, dst, c, memory_limit);
  }
  return out;
}

void h5_write_layout(const std::string& file, const std::string& dataset, const py::object& block,
                     const Layout& l, const py::object& dtype, std::int64_t memory_limit,
                     MPI_Fint comm) {
  const MPI_Comm c = comm_of(comm);
  DType t{};
  check_on_every_rank(c, [&] {
    t = dtype_of_object(dtype);
    check_local_block(block, l, rank_of(c), t, "the block");
  });
  const void* src = nullptr;
  if (!block.is_none() && py::reinterpret_borrow<py::array>(block).size() > 0)
    src = py::reinterpret_borrow<py::array>(block).data();
  py::gil_scoped_release release;
  h5::write_layout(file, dataset, l, t, src, c, {}, memory_limit);
}

} // namespace

// The array must be rank r's local block of l: its shape and dtype t, laid out as the layout
// says (C or Fortran order, the leading dimension). A rank that holds nothing may pass None.
void check_local_block(const py::object& obj, const Layout& l, int rank, DType t,
                       const std::string& name) {
  const Shape s = l.local_shape(rank);
  if (obj.is_none()) {
    if (!s.empty())
      input_error(name + " is None, but this rank's local block is " + shape_str(s.rows, s.cols) +
                  ": pass a numpy array");
    return;
  }
  const py::array a = host_array(obj, name);
  if (a.ndim() != 2)
    input_error(name + " must be a 2-D array (a local block), got " + std::to_string(a.ndim()) +
                " dimensions");
  if (s.empty() && a.size() == 0)
    return; // nothing to read or write: any empty array will do
  if (a.shape(0) != s.rows || a.shape(1) != s.cols)
    input_error(name + " must have shape " + shape_str(s.rows, s.cols) +
                " (this rank's local block), got " + shape_str(a.shape(0), a.shape(1)));
  if (dtype_of_object(a.dtype()) != t || !a.dtype().attr("isnative").cast<bool>())
    input_error(name + " must have dtype " + text(numpy_dtype(t)) + " (native byte order), got " +
                text(a.dtype()));
  const std::int64_t item = static_cast<std::int64_t>(a.itemsize());
  const std::int64_t ld = l.leading_dimension(rank);
  const bool row_major = l.storage() == StorageOrder::RowMajor;
  const std::int64_t line_stride = row_major ? a.strides(0) : a.strides(1);
  const std::int64_t unit_stride = row_major ? a.strides(1) : a.strides(0);
  const std::int64_t lines = row_major ? s.rows : s.cols;
  const std::int64_t along = row_major ? s.cols : s.rows;
  const bool ok = (along <= 1 || unit_stride == item) && (lines <= 1 || line_stride == ld * item);
  if (!ok)
    input_error(name + " must be " +
                (row_major ? "C-ordered (row-major)" : "Fortran-ordered (column-major)") +
                " with leading dimension " + std::to_string(ld) + ", as the layout says: pass " +
                (row_major ? "numpy.ascontiguousarray(" + name + ")"
                           : "numpy.asfortranarray(" + name + ")") +
                (ld > along ? " inside a buffer padded to the leading dimension" : ""));
}

void bind_redistribute(py::module_& module) {
  py::class_<Layout>(module, "Layout")
      .def_static(
          "rows",
          [](std::int64_t m, std::int64_t n, int nranks, const std::string& order) {
            return Layout::row_blocks({m, n}, nranks, storage_of(order));
          },
          py::arg("m"), py::arg("n"), py::arg("nranks"), py::arg("order") = "C")
      .def_static(
          "cols",
          [](std::int64_t m, std::int64_t n, int nranks, const std::string& order) {
            return Layout::col_blocks({m, n}, nranks, storage_of(order));
          },
          py::arg("m"), py::arg("n"), py::arg("nranks"), py::arg("order") = "C")
      .def_static(
          "grid2d",
          [](std::int64_t m, std::int64_t n, int pr, int pc, int nranks,
             const std::string& grid_order, const std::string& order) {
            return Layout::blocks_2d({m, n}, pr, pc, grid_order_of(grid_order), storage_of(order),
                                     nranks);
          },
          py::arg("m"), py::arg("n"), py::arg("pr"), py::arg("pc"), py::arg("nranks"),
          py::arg("grid_order") = "row", py::arg("order") = "C")
      .def_static(
          "block_cyclic",
          [](std::int64_t m, std::int64_t n, std::int64_t mb, std::int64_t nb, int pr, int pc,
             int nranks, int rsrc, int csrc, const std::string& grid_order,
             std::vector<int> grid_ranks, std::int64_t lld, const std::string& order) {
            BlockCyclicSpec s;
            s.global = {m, n};
            s.mb = mb;
            s.nb = nb;
            s.pr = pr;
            s.pc = pc;
            s.rsrc = rsrc;
            s.csrc = csrc;
            s.grid_order = grid_order_of(grid_order);
            s.grid_ranks = std::move(grid_ranks);
            s.nranks = nranks;
            s.lld = lld;
            s.storage = storage_of(order);
            return Layout::block_cyclic(s);
          },
          py::arg("m"), py::arg("n"), py::arg("mb"), py::arg("nb"), py::arg("pr"), py::arg("pc"),
          py::arg("nranks"), py::arg("rsrc") = 0, py::arg("csrc") = 0,
          py::arg("grid_order") = "row", py::arg("grid_ranks") = std::vector<int>{},
          py::arg("lld") = 0, py::arg("order") = "F")
      .def_static(
          "from_descriptor",
          [](std::vector<int> desc, int nprow, int npcol, int nranks, const std::string& grid_order,
             std::vector<int> grid_ranks) {
            if (desc.size() != 9)
              input_error("desc must be a ScaLAPACK descriptor of 9 integers, got " +
                          std::to_string(desc.size()));
            return Layout::from_scalapack(desc.data(), nprow, npcol, nranks, std::move(grid_ranks),
                                          grid_order_of(grid_order));
          },
          py::arg("desc"), py::arg("nprow"), py::arg("npcol"), py::arg("nranks"),
          py::arg("grid_order") = "row", py::arg("grid_ranks") = std::vector<int>{})
      .def_static(
          "grid",
          [](std::vector<std::int64_t> row_splits, std::vector<std::int64_t> col_splits,
             std::vector<int> owners, int nranks, const std::string& order, std::int64_t lld) {
            return Layout::grid(std::move(row_splits), std::move(col_splits), std::move(owners),
                                nranks, storage_of(order), lld);
          },
          py::arg("row_splits"), py::arg("col_splits"), py::arg("owners"), py::arg("nranks"),
          py::arg("order") = "C", py::arg("lld") = 0)
      .def_property_readonly(
          "shape", [](const Layout& l) { return py::make_tuple(l.global().rows, l.global().cols); })
      .def_property_readonly("nranks", &Layout::nranks)
      .def_property_readonly("order", [](const Layout& l) { return order_name(l.storage()); })
      .def_property_readonly("row_splits", &Layout::row_splits)
      .def_property_readonly("col_splits", &Layout::col_splits)
      .def("owner", &Layout::block_owner, py::arg("bi"), py::arg("bj"))
      .def(
          "local_position",
          [](const Layout& l, std::int64_t bi, std::int64_t bj) {
            return py::make_tuple(l.block_local_row(bi, bj), l.block_local_col(bi, bj));
          },
          py::arg("bi"), py::arg("bj"))
      .def(
          "local_shape",
          [](const Layout& l, int rank) {
            const Shape s = l.local_shape(rank);
            return py::make_tuple(s.rows, s.cols);
          },
          py::arg("rank"))
      .def("leading_dimension", &Layout::leading_dimension, py::arg("rank"))
      .def(
          "locate",
          [](const Layout& l, std::int64_t i, std::int64_t j) {
            if (i < 0 || j < 0 || i >= l.global().rows || j >= l.global().cols)
              input_error("(" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                          shape_str(l.global().rows, l.global().cols) + " matrix");
            const LocalIndex x = l.local_index(i, j);
            return py::make_tuple(x.rank, x.row, x.col);
          },
          py::arg("i"), py::arg("j"))
      .def(
          "empty",
          [](const Layout& l, int rank, const py::object& dtype) {
            return new_local_block(l, rank, dtype_of_object(dtype));
          },
          py::arg("rank"), py::arg("dtype"))
      .def("transposed", &Layout::transposed)
      .def(py::self == py::self)
      .def("__repr__", &layout_repr);

  py::class_<PyRedistributePlan>(module, "RedistributePlan")
      .def(py::init<const Layout&, const Layout&, const py::object&, const std::string&, Pair, Pair,
                    std::optional<Pair>, bool, std::int64_t, const std::string&, MPI_Fint>(),
           py::arg("a"), py::arg("b"), py::arg("dtype"), py::arg("op"), py::arg("a_corner"),
           py::arg("b_corner"), py::arg("shape"), py::arg("relabel"), py::arg("max_buffer_bytes"),
           py::arg("backend"), py::arg("comm"))
      .def("execute", &PyRedistributePlan::execute, py::arg("a"), py::arg("out"), py::arg("alpha"),
           py::arg("beta"))
      .def_property_readonly("dtype", &PyRedistributePlan::dtype)
      .def_property_readonly("backend", &PyRedistributePlan::backend)
      .def_property_readonly("traffic", &PyRedistributePlan::traffic)
      .def_property_readonly("target", &PyRedistributePlan::target)
      .def_property_readonly("relabelling", &PyRedistributePlan::relabelling);

  module.def("h5_read_layout", &h5_read_layout, py::arg("file"), py::arg("dataset"),
             py::arg("layout"), py::arg("dtype"), py::arg("memory_limit"), py::arg("comm"));
  module.def("h5_write_layout", &h5_write_layout, py::arg("file"), py::arg("dataset"),
             py::arg("block"), py::arg("layout"), py::arg("dtype"), py::arg("memory_limit"),
             py::arg("comm"));
}

} // namespace tessera::python

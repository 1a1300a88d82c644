// The array checks and conversions of bindings/python/arrays.hpp.
#include "arrays.hpp"

#include <optional>

namespace tessera::python {

[[noreturn]] void input_error(const std::string& message) {
  throw InputError(message, __FILE__, __LINE__);
}

std::string text(const py::object& o) {
  return o.attr("__str__")().cast<std::string>();
}

// The module is an application of libtessera.so: it reaches MPI through the public API.
MPI_Comm comm_of(MPI_Fint handle) {
  return comm_from_fortran(handle);
}
int rank_of(MPI_Comm comm) {
  return comm_rank(comm);
}

namespace {
// The DType of a numpy dtype; false when tessera has none for it.
bool dtype_of_numpy(const py::dtype& dt, DType& t) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  static const struct {
    char kind;
    py::ssize_t size;
    DType t;
  } known[] = {{'f', 4, DType::f32},   {'f', 8, DType::f64}, {'c', 8, DType::c64},
               {'c', 16, DType::c128}, {'i', 1, DType::i8},  {'i', 2, DType::i16},
               {'i', 4, DType::i32},   {'i', 8, DType::i64}, {'u', 1, DType::u8},
               {'u', 2, DType::u16},   {'u', 4, DType::u32}, {'u', 8, DType::u64}};
  for (const auto& k : known)
    if (k.kind == kind && k.size == size) {
      t = k.t;
      return true;
    }
  return false;
}

// tessera's names of the matrix types ("f64") or anything numpy.dtype() takes. Its integer
// names are left to numpy, which reads "i8" as int64 where tessera means int8.
DType parse_dtype_object(const py::handle& obj, bool integers) {
  if (py::isinstance<py::str>(obj)) {
    const auto s = obj.cast<std::string>();
    if (s == "f32" || s == "f64" || s == "c64" || s == "c128")
      return parse_dtype(s);
  }
  const py::dtype dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(obj));
  DType t{};
  if (dtype_of_numpy(dt, t) && (integers || !dtype_is_integer(t)))
    return t;
  input_error("dtype " + text(dt) + " is not one tessera handles: expected float32, float64, " +
              "complex64 or complex128" +
              (integers ? ", or a signed or unsigned integer of 8, 16, 32 or 64 bits" : ""));
}
} // namespace

DType dtype_of_object(const py::handle& obj) {
  return parse_dtype_object(obj, false);
}

DType any_dtype_of_object(const py::handle& obj) {
  return parse_dtype_object(obj, true);
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
  case DType::i8:
    return py::dtype::of<std::int8_t>();
  case DType::i16:
    return py::dtype::of<std::int16_t>();
  case DType::i32:
    return py::dtype::of<std::int32_t>();
  case DType::i64:
    return py::dtype::of<std::int64_t>();
  case DType::u8:
    return py::dtype::of<std::uint8_t>();
  case DType::u16:
    return py::dtype::of<std::uint16_t>();
  case DType::u32:
    return py::dtype::of<std::uint32_t>();
  case DType::u64:
    return py::dtype::of<std::uint64_t>();
  }
  return py::dtype::of<std::complex<double>>();
}

std::string shape_str(std::int64_t r, std::int64_t c) {
  return "(" + std::to_string(r) + ", " + std::to_string(c) + ")";
}

std::string dims_str(const std::vector<std::int64_t>& dims) {
  std::string s = "(";
  for (std::size_t k = 0; k < dims.size(); ++k)
    s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

void check_array(const py::array& a, DType t, const std::vector<std::int64_t>& shape,
                 const std::string& name) {
  const std::vector<std::int64_t> got(a.shape(), a.shape() + a.ndim());
  if (got != shape)
    input_error(name + " must have shape " + dims_str(shape) + ", got " + dims_str(got));
  DType have{};
  if (!dtype_of_numpy(a.dtype(), have) || have != t || !a.dtype().attr("isnative").cast<bool>())
    input_error(name + " must have dtype " + text(numpy_dtype(t)) + " (native byte order), got " +
                text(a.dtype()));
  if (!(a.flags() & py::array::c_style))
    input_error(name + " must be C-contiguous: pass numpy.ascontiguousarray(" + name + ")");
}

void check_block(const py::array& a, DType t, std::int64_t rows, std::int64_t cols,
                 const char* what) {
  check_array(a, t, {rows, cols}, what);
}

py::array new_array(DType t, const std::vector<std::int64_t>& shape) {
  return py::array(numpy_dtype(t), std::vector<py::ssize_t>(shape.begin(), shape.end()));
}

py::array new_block(DType t, std::int64_t rows, std::int64_t cols) {
  return new_array(t, {rows, cols});
}

// --- Device arrays: any object exposing the __cuda_array_interface__ (CuPy, Numba, PyTorch),
// versions 2 and 3 (https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html).

bool is_device_array(const py::handle& obj) {
  return !obj.is_none() && py::hasattr(obj, "__cuda_array_interface__");
}

std::string type_name(const py::handle& obj) {
  return py::type::handle_of(obj).attr("__name__").cast<std::string>();
}

namespace {
const char* typestr_of(DType t) {
  switch (t) {
  case DType::f32:
    return "<f4";
  case DType::f64:
    return "<f8";
  case DType::c64:
    return "<c8";
  case DType::c128:
    break;
  case DType::i8:
    return "|i1";
  case DType::i16:
    return "<i2";
  case DType::i32:
    return "<i4";
  case DType::i64:
    return "<i8";
  case DType::u8:
    return "|u1";
  case DType::u16:
    return "<u2";
  case DType::u32:
    return "<u4";
  case DType::u64:
    return "<u8";
  }
  return "<c16";
}

// The integers of a tuple (or list) of Python ints; nullopt when it is anything else.
std::optional<std::vector<std::int64_t>> int_tuple(const py::handle& o) {
  if (!py::isinstance<py::tuple>(o) && !py::isinstance<py::list>(o))
    return std::nullopt;
  std::vector<std::int64_t> v;
  for (const auto& x : py::reinterpret_borrow<py::sequence>(o)) {
    if (!py::isinstance<py::int_>(x))
      return std::nullopt;
    v.push_back(x.cast<std::int64_t>());
  }
  return v;
}
} // namespace

DeviceArray device_array(const py::handle& obj, DType t, std::int64_t rows, std::int64_t cols,
                         const std::string& name) {
  return device_array(obj, t, std::vector<std::int64_t>{rows, cols}, name);
}

DeviceArray device_array(const py::handle& obj, DType t, const std::vector<std::int64_t>& want,
                         const std::string& name) {
  const py::object cai = obj.attr("__cuda_array_interface__");
  if (!py::isinstance<py::dict>(cai))
    input_error(name + "'s __cuda_array_interface__ must be a dict, got " + type_name(cai));
  const auto d = py::reinterpret_borrow<py::dict>(cai);
  const auto get = [&d](const char* key) -> py::object {
    return d.contains(key) ? py::reinterpret_borrow<py::object>(d[key]) : py::none();
  };
  const py::object version = get("version");
  if (!py::isinstance<py::int_>(version) || version.cast<std::int64_t>() < 2 ||
      version.cast<std::int64_t>() > 3)
    input_error(name + "'s __cuda_array_interface__ has version " + text(version) +
                ", expected 2 or 3");
  const auto shape = int_tuple(get("shape"));
  if (!shape)
    input_error(name + "'s __cuda_array_interface__ shape must be a tuple of ints, got " +
                text(get("shape")));
  if (*shape != want)
    input_error(name + " must have shape " + dims_str(want) + ", got " + dims_str(*shape));
  std::int64_t elements = 1;
  for (const std::int64_t n : want)
    elements *= n;
  const py::object typestr = get("typestr");
  if (!py::isinstance<py::str>(typestr) || typestr.cast<std::string>() != typestr_of(t))
    input_error(name + " must have dtype " + text(numpy_dtype(t)) + " (typestr '" + typestr_of(t) +
                "'), got typestr " + text(py::repr(typestr)));
  const py::object strides = get("strides");
  if (!strides.is_none()) {
    const auto s = int_tuple(strides);
    if (!s || s->size() != want.size())
      input_error(name + "'s __cuda_array_interface__ strides must be None or a tuple of " +
                  std::to_string(want.size()) + " ints, got " + text(strides));
    // As numpy's C-contiguity: an empty array is contiguous, and the stride of a dimension of
    // extent 1 is never used.
    std::vector<std::int64_t> c_strides(want.size());
    bool contiguous = true;
    auto step = static_cast<std::int64_t>(dtype_size(t));
    for (std::size_t k = want.size(); k-- > 0;) {
      c_strides[k] = step;
      contiguous = contiguous && (want[k] == 1 || (*s)[k] == step);
      step *= want[k];
    }
    if (!contiguous && elements != 0)
      input_error(name + " must be C-contiguous (strides " + dims_str(c_strides) +
                  " bytes), got strides " + dims_str(*s) +
                  ": pass a contiguous copy (cupy.ascontiguousarray)");
  }
  if (!get("mask").is_none())
    input_error(name + " is masked (its __cuda_array_interface__ has a mask): tessera takes "
                       "arrays without a mask");
  const py::object data = get("data");
  if (!py::isinstance<py::tuple>(data) || py::len(data) != 2 ||
      !py::isinstance<py::int_>(data[py::int_(0)]))
    input_error(name +
                "'s __cuda_array_interface__ data must be a tuple (pointer, readonly), "
                "got " +
                text(data));
  DeviceArray a;
  a.ptr = data[py::int_(0)].cast<std::uintptr_t>();
  a.readonly = py::bool_(data[py::int_(1)]).cast<bool>();
  a.bytes = static_cast<std::size_t>(elements) * dtype_size(t);
  if (a.ptr == 0 && a.bytes != 0)
    input_error(name +
                "'s __cuda_array_interface__ data pointer is null, expected the address "
                "of its " +
                std::to_string(elements) + " elements");
  const py::object stream = get("stream");
  if (!stream.is_none()) {
    if (!py::isinstance<py::int_>(stream))
      input_error(name + "'s __cuda_array_interface__ stream must be None or an int, got " +
                  text(stream));
    const auto v = stream.cast<std::uintptr_t>();
    if (v == 0)
      input_error(name + "'s __cuda_array_interface__ stream is 0, which the protocol "
                         "disallows: expected None, 1 (legacy default stream), 2 (per-thread "
                         "default stream) or a stream pointer");
    if (v != 1 && v != 2) // the library orders its work after the legacy default stream
      a.stream = v;
  }
  return a;
}

// The cupy module; an InputError with `without` (what to do instead) where it is not installed.
py::object import_cupy(const std::string& without) {
  try {
    return py::module_::import("cupy");
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_ImportError))
      throw;
    input_error(without);
  }
}

// Through CuPy: the one way to reach the CUDA runtime from here without linking it.
void wait_for_stream(const DeviceArray& a, const std::string& name) {
  if (a.stream == 0)
    return;
  const py::object cupy =
      import_cupy(name + " comes with CUDA stream " + std::to_string(a.stream) +
                  ", which tessera cannot synchronize without CuPy: synchronize that stream "
                  "before calling execute (then pass the array with stream None)");
  cupy.attr("cuda").attr("ExternalStream")(a.stream).attr("synchronize")();
}

bool overlap(std::uintptr_t a, std::size_t na, std::uintptr_t b, std::size_t nb) {
  return na != 0 && nb != 0 && a < b + nb && b < a + na;
}

void check_out_apart(const py::array& in, const py::array& out) {
  if (!out.writeable())
    input_error("out is read-only, expected a writable array");
  if (overlap(reinterpret_cast<std::uintptr_t>(in.data()), static_cast<std::size_t>(in.nbytes()),
              reinterpret_cast<std::uintptr_t>(out.data()), static_cast<std::size_t>(out.nbytes())))
    input_error("out overlaps the input block, expected separate memory");
}

// Device arrays go to a Memory::Device plan, which needs the CUDA backend.
void require_cuda(Backend resolved, const std::string& name) {
  if (resolved != Backend::Cuda)
    input_error(name + " is a device array (__cuda_array_interface__): device arrays need a " +
                "plan with backend=\"cuda\", this plan's backend is \"" +
                std::string(backend_name(resolved)) + "\" (or pass a numpy array)");
}

// A numpy array, or an InputError naming what was passed instead.
py::array host_array(const py::handle& obj, const std::string& name) {
  if (!py::isinstance<py::array>(obj))
    input_error(name + " must be a numpy array or a device array (__cuda_array_interface__), " +
                "got " + type_name(obj));
  return py::reinterpret_borrow<py::array>(obj);
}

} // namespace tessera::python

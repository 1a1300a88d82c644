// Checks of the arrays the Python module is handed (numpy arrays and device arrays through the
// __cuda_array_interface__, of any rank), the dtype and shape conversions, and the module's errors:
// each raises tessera's InputError (tessera.InputError in Python) before any collective call.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <tessera/tessera.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::python {

namespace py = pybind11;

[[noreturn]] void input_error(const std::string& message);

std::string text(const py::object& o);

// The module is an application of libtessera.so, which exports only the public API (tessera's
// internal MPI helpers are not in it): the two MPI calls it makes itself are here.
MPI_Comm comm_of(MPI_Fint handle);

int rank_of(MPI_Comm comm);

// The matrix types (f32, f64, c64, c128): what the transpose and reduction plans take.
DType dtype_of_object(const py::handle& obj);
// Any type tessera moves: the matrix types and the signed and unsigned integers of 8 to 64 bits
// (what a permutation of dimensions takes).
DType any_dtype_of_object(const py::handle& obj);

py::dtype numpy_dtype(DType t);

std::string shape_str(std::int64_t r, std::int64_t c);
// "(2, 3, 4)", "(5,)": a shape as Python writes it.
std::string dims_str(const std::vector<std::int64_t>& dims);

// The array must be a C-contiguous array of this shape and dtype t, in native byte order.
void check_array(const py::array& a, DType t, const std::vector<std::int64_t>& shape,
                 const std::string& name);
// The same for a rows x cols block.
void check_block(const py::array& a, DType t, std::int64_t rows, std::int64_t cols,
                 const char* what);

py::array new_array(DType t, const std::vector<std::int64_t>& shape);
py::array new_block(DType t, std::int64_t rows, std::int64_t cols);

bool is_device_array(const py::handle& obj);

std::string type_name(const py::handle& obj);

// What tessera needs from a checked device array.
struct DeviceArray {
  std::uintptr_t ptr = 0;
  std::size_t bytes = 0;
  bool readonly = false;
  // A stream the producer's work may still be pending on; 0 when there is nothing to wait for
  // (no stream given, or a default stream, which the library waits for itself).
  std::uintptr_t stream = 0;
};

// Checks obj's __cuda_array_interface__ against a C-contiguous array of this shape and dtype t
// (the rules of check_array for numpy arrays), touching no memory.
DeviceArray device_array(const py::handle& obj, DType t, const std::vector<std::int64_t>& shape,
                         const std::string& name);
// The same for a rows × cols block.
DeviceArray device_array(const py::handle& obj, DType t, std::int64_t rows, std::int64_t cols,
                         const std::string& name);

// The cupy module; an InputError with `without` (what to do instead) where it is not installed.
py::object import_cupy(const std::string& without);

// The producer's work on the array may still be pending on a stream of its own: wait for
// it before tessera reads or writes the memory (through CuPy, the one way to reach the CUDA
// runtime from here without linking it).
void wait_for_stream(const DeviceArray& a, const std::string& name);

bool overlap(std::uintptr_t a, std::size_t na, std::uintptr_t b, std::size_t nb);
// InputError unless `out` (already checked for dtype and shape) is writable and apart from `in`.
void check_out_apart(const py::array& in, const py::array& out);

// Device arrays go to a Memory::Device plan, which needs the CUDA backend.
void require_cuda(Backend resolved, const std::string& name);

// A numpy array, or an InputError naming what was passed instead.
py::array host_array(const py::handle& obj, const std::string& name);

} // namespace tessera::python

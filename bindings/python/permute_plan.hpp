// The distributed permutation of dimensions as the Python module binds it: blocks are numpy
// arrays of any rank, or device arrays (__cuda_array_interface__) on the CUDA backend. As with
// the transpose, the host plan (Memory::Host) and the device plan (Memory::Device) are two
// plans; the one named at construction is built then, the other on the first execute that gets
// its kind of array. Building is collective, so every rank passes the same kind to an execute.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tessera/tessera.hpp>

#include "arrays.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tessera::python {

class PyPermutePlan {
public:
  PyPermutePlan(std::vector<std::int64_t> shape, std::vector<int> axes, const py::object& dtype,
                MPI_Fint comm, const std::string& backend, bool device)
      : comm_(comm_of(comm)), dtype_(any_dtype_of_object(dtype)), backend_(parse_backend(backend)),
        shape_(std::move(shape)), axes_(std::move(axes)) {
    if (device)
      device_.emplace(shape_, axes_, dtype_, comm_, backend_,
                      PermuteOptions{.memory = Memory::Device});
    else
      host_.emplace(shape_, axes_, dtype_, comm_, backend_);
  }

  py::object execute(const py::object& in, const py::object& out) {
    if (is_device_array(in))
      return execute_device(in, out);
    const PermutePlan& p = any();
    py::array a, result;
    // Agreed: a rank whose arrays are wrong raises, and so do the others, naming it.
    check_on_every_rank(comm_, [&] {
      a = host_array(in, "the input block");
      check_array(a, dtype_, p.input_block().shape, "the input block");
      if (is_device_array(out))
        input_error("out is a device array but the input block is a numpy array: pass both in "
                    "host memory (numpy) or both in device memory");
      if (out.is_none()) {
        result = new_array(dtype_, p.output_block().shape);
      } else {
        result = host_array(out, "out");
        check_array(result, dtype_, p.output_block().shape, "out");
        check_out_apart(a, result);
      }
    });
    const void* src = a.data();
    void* dst = result.mutable_data();
    {
      py::gil_scoped_release release;
      if (!host_)
        host_.emplace(shape_, axes_, dtype_, comm_, backend_);
      host_->execute(src, dst);
    }
    return result;
  }

  py::tuple input_shape() const { return tuple_of(any().input_shape()); }
  py::tuple output_shape() const { return tuple_of(any().output_shape()); }
  py::tuple axes() const { return tuple_of(any().axes()); }
  py::tuple input_block_shape() const { return tuple_of(any().input_block().shape); }
  py::tuple output_block_shape() const { return tuple_of(any().output_block().shape); }
  // This rank's indices of the outermost dimension: a[plan.input_slice] is its input block.
  py::slice input_slice() const { return slice_of(any().input_block()); }
  py::slice output_slice() const { return slice_of(any().output_block()); }
  py::dtype dtype() const { return numpy_dtype(dtype_); }
  std::string backend() const { return std::string(backend_name(any().backend())); }

private:
  // The plan built first: both give the same shapes and blocks.
  const PermutePlan& any() const { return host_ ? *host_ : *device_; }

  template <class T>
  static py::tuple tuple_of(const std::vector<T>& v) {
    return py::tuple(py::cast(v));
  }
  static py::slice slice_of(const PermuteBlock& b) {
    return py::slice(py::int_(b.begin), py::int_(b.begin + b.length), py::none());
  }

  py::object execute_device(const py::object& in, const py::object& out) {
    const PermutePlan& p = any();
    const std::vector<std::int64_t>& in_shape = p.input_block().shape;
    const std::vector<std::int64_t>& out_shape = p.output_block().shape;
    DeviceArray src, dst;
    py::object result = out;
    check_on_every_rank(comm_, [&] {
      if (!device_)
        require_cuda(host_->backend(), "the input block");
      src = device_array(in, dtype_, in_shape, "the input block");
      if (out.is_none()) {
        const py::object cupy = import_cupy(
            "the input block is a device array and CuPy, which would allocate the output, is not "
            "installed: pass out= (a writable device array of shape " +
            dims_str(out_shape) + " and dtype " + text(numpy_dtype(dtype_)) + ")");
        result = cupy.attr("empty")(tuple_of(out_shape), numpy_dtype(dtype_));
      } else if (!is_device_array(out)) {
        input_error("the input block is a device array but out is a " + type_name(out) +
                    ": pass out= as a device array (__cuda_array_interface__) too");
      }
      dst = device_array(result, dtype_, out_shape, "out");
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
        device_.emplace(shape_, axes_, dtype_, comm_, Backend::Cuda,
                        PermuteOptions{.memory = Memory::Device});
      device_->execute(reinterpret_cast<const void*>(src.ptr), reinterpret_cast<void*>(dst.ptr));
    }
    return result;
  }

  MPI_Comm comm_; // kept alive by the Python object (tessera/__init__.py)
  DType dtype_;
  Backend backend_;
  std::vector<std::int64_t> shape_;
  std::vector<int> axes_;
  std::optional<PermutePlan> host_, device_;
};

} // namespace tessera::python

// Batched tridiagonal solves on the GPU (f64): the device side of src/cpu/tridiag.hpp, with the
// same memory layouts (core/batch_layout.hpp: element i of system s at
// x[s * system_stride + i * element_stride]) and the same operation sequences line by line, so
// both backends give the same bits. One thread per system; the interleaved layout
// (system_stride = 1) is the coalesced one.
//
// Device pointers; work is queued on `stream`. Solutions overwrite the right-hand side.
#pragma once

#include <cstdint>

#include "core/backend_fn.hpp"
#include "core/batch_layout.hpp"
#include "cuda/buffer.hpp"

struct CUstream_st;

namespace tessera {
class TridiagFactors;
} // namespace tessera

namespace tessera::cuda {

// General coefficients, one matrix per system (a, b, c laid out as d): Thomas, as
// cpu::thomas_batched. `scratch` grows to n * count doubles.
TESSERA_CUDA_FN(void thomas_batched(CUstream_st* stream, const double* a, const double* b,
                                    const double* c, double* d, const BatchLayout& layout,
                                    DeviceBuffer& scratch));
// Wrapping indices, as cpu::cyclic_batched. `scratch` grows to 3 * n * count doubles.
TESSERA_CUDA_FN(void cyclic_batched(CUstream_st* stream, const double* a, const double* b,
                                    const double* c, double* d, const BatchLayout& layout,
                                    DeviceBuffer& scratch));

// A TridiagFactors factorization (core/tridiag_factors.hpp) copied to the current device, applied
// to many systems.
class DeviceTridiag {
public:
  DeviceTridiag() = default;
  TESSERA_CUDA_FN(explicit DeviceTridiag(const TridiagFactors& f));

  // As cpu::ConstTridiag::solve; layout.n must equal n().
  TESSERA_CUDA_FN(void solve(CUstream_st* stream, double* x, const BatchLayout& layout) const);
  std::int64_t n() const noexcept { return n_; }

  // The factorization as kernels outside this file read it (device arrays of n values; z is
  // meaningful only when cyclic).
  struct Factors {
    const double* upper = nullptr;
    const double* inv = nullptr;
    const double* z = nullptr;
    double lower = 0.0, corner = 0.0, inv_correction = 0.0;
    bool cyclic = false;
  };
  Factors factors() const noexcept {
    const double* base = arrays_.as<double>();
    return {base, base + n_, base + 2 * n_, lower_, corner_, inv_correction_, cyclic_};
  }

private:
  std::int64_t n_ = 0;
  bool cyclic_ = false;
  double lower_ = 0.0, corner_ = 0.0, inv_correction_ = 0.0;
  DeviceBuffer arrays_; // upper[n] | inv[n] | z[n] (z only when cyclic)
};

} // namespace tessera::cuda

// cuBLAS geam and cub::DeviceReduce::Sum for `tessera bench --backend cuda` (see
// bench_cuda_ref.hpp): the library baselines that tessera's kernels are compared with.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cub/device/device_reduce.cuh>
#include <string>

#include "app/bench_cuda_ref.hpp"
#include "core/check.hpp"
#include "cuda/buffer.hpp"

namespace tessera::app::cuda_ref {

namespace {

void check_cublas(cublasStatus_t rc, const char* expr, const char* file, int line) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string("cuBLAS: ") + expr + " failed with status " +
                        std::to_string(static_cast<int>(rc)),
                    file, line);
}

} // namespace

#define BENCH_CHECK_CUBLAS(call) check_cublas((call), #call, __FILE__, __LINE__)

struct Geam::Impl {
  cublasHandle_t handle = nullptr;
};

Geam::Geam(CUstream_st* stream) : impl_(std::make_unique<Impl>()) {
  BENCH_CHECK_CUBLAS(cublasCreate(&impl_->handle));
  const cublasStatus_t rc = cublasSetStream(impl_->handle, stream);
  if (rc != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(impl_->handle);
    check_cublas(rc, "cublasSetStream(handle, stream)", __FILE__, __LINE__);
  }
}

Geam::~Geam() {
  if (impl_ && impl_->handle)
    cublasDestroy(impl_->handle); // nothing useful to do with a failure here
}

bool Geam::supports(std::int64_t rows, std::int64_t cols) noexcept {
  return rows > 0 && cols > 0 && rows <= INT_MAX && cols <= INT_MAX;
}

void Geam::transpose(DType t, const void* in, void* out, std::int64_t rows, std::int64_t cols) {
  // Row-major rows × cols is column-major cols × rows (lda = cols); C = Aᵀ is column-major
  // rows × cols (ldc = rows). With beta = 0, B (= C) is not read.
  const int m = static_cast<int>(rows), n = static_cast<int>(cols);
  cublasHandle_t h = impl_->handle;
  switch (t) {
  case DType::f32: {
    const float one = 1, zero = 0;
    BENCH_CHECK_CUBLAS(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                                   static_cast<const float*>(in), n, &zero,
                                   static_cast<float*>(out), m, static_cast<float*>(out), m));
    return;
  }
  case DType::f64: {
    const double one = 1, zero = 0;
    BENCH_CHECK_CUBLAS(cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                                   static_cast<const double*>(in), n, &zero,
                                   static_cast<double*>(out), m, static_cast<double*>(out), m));
    return;
  }
  case DType::c64: {
    const cuComplex one{1, 0}, zero{0, 0};
    BENCH_CHECK_CUBLAS(
        cublasCgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, static_cast<const cuComplex*>(in), n,
                    &zero, static_cast<cuComplex*>(out), m, static_cast<cuComplex*>(out), m));
    return;
  }
  case DType::c128: {
    const cuDoubleComplex one{1, 0}, zero{0, 0};
    BENCH_CHECK_CUBLAS(cublasZgeam(
        h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, static_cast<const cuDoubleComplex*>(in), n, &zero,
        static_cast<cuDoubleComplex*>(out), m, static_cast<cuDoubleComplex*>(out), m));
    return;
  }
  }
}

struct CubSum::Impl {
  CUstream_st* stream = nullptr;
  DType t = DType::f64;
  long long n = 0;
  cuda::DeviceBuffer temp;
  std::size_t temp_bytes = 0;

  // One call for the size query (temp == nullptr) and for the sum itself.
  void sum(void* temp_ptr, std::size_t& bytes, const void* in, void* out) const {
    if (t == DType::f32)
      CHECK_CUDA(cub::DeviceReduce::Sum(temp_ptr, bytes, static_cast<const float*>(in),
                                        static_cast<float*>(out), n, stream));
    else
      CHECK_CUDA(cub::DeviceReduce::Sum(temp_ptr, bytes, static_cast<const double*>(in),
                                        static_cast<double*>(out), n, stream));
  }
};

CubSum::CubSum(CUstream_st* stream, DType t, std::int64_t n) : impl_(std::make_unique<Impl>()) {
  if (t != DType::f32 && t != DType::f64)
    throw InputError("cub::DeviceReduce::Sum baseline: f32 or f64 only", __FILE__, __LINE__);
  impl_->stream = stream;
  impl_->t = t;
  impl_->n = static_cast<long long>(n);
  impl_->sum(nullptr, impl_->temp_bytes, nullptr, nullptr);
  impl_->temp = cuda::DeviceBuffer(std::max<std::size_t>(impl_->temp_bytes, 16));
}

CubSum::~CubSum() = default;

void CubSum::run(const void* in, void* out) {
  std::size_t bytes = impl_->temp_bytes;
  impl_->sum(impl_->temp.data(), bytes, in, out);
}

} // namespace tessera::app::cuda_ref

// The baselines of reference.hpp: cuBLAS geam through dlopen, the textbook tile
// transpose and cub::DeviceReduce::Sum.
#include <cublas_v2.h> // types and prototypes only: the functions are resolved with dlsym
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cub/device/device_reduce.cuh>
#include <string>

#include "bench/cuda/reference.hpp"
#include "core/check.hpp"
#include "cuda/buffer.hpp"

namespace tessera::cuda::bench_ref {

namespace {

// The cuBLAS entry points used here, resolved once per process.
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgeam) sgeam = nullptr;
  decltype(&cublasDgeam) dgeam = nullptr;
  decltype(&cublasCgeam) cgeam = nullptr;
  decltype(&cublasZgeam) zgeam = nullptr;
  std::string error; // empty when loaded
};

template <class F>
bool resolve(void* lib, const char* name, F& f, std::string& error) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (f == nullptr)
    error = std::string("cuBLAS has no ") + name;
  return f != nullptr;
}

const Cublas& cublas() {
  static const Cublas c = [] {
    Cublas c;
    void* lib = nullptr;
    std::string tried;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib != nullptr)
        break;
      const char* e = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
    }
    if (lib == nullptr) {
      c.error = "cuBLAS could not be loaded (" + tried + ")";
      return c;
    }
    // Kept loaded for the life of the process: handles may outlive any one benchmark.
    const bool ok = resolve(lib, "cublasCreate_v2", c.create, c.error) &&
                    resolve(lib, "cublasDestroy_v2", c.destroy, c.error) &&
                    resolve(lib, "cublasSetStream_v2", c.set_stream, c.error) &&
                    resolve(lib, "cublasSgeam", c.sgeam, c.error) &&
                    resolve(lib, "cublasDgeam", c.dgeam, c.error) &&
                    resolve(lib, "cublasCgeam", c.cgeam, c.error) &&
                    resolve(lib, "cublasZgeam", c.zgeam, c.error);
    (void)ok;
    return c;
  }();
  return c;
}

void check_cublas(cublasStatus_t rc, const char* expr, const char* file, int line) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string("cuBLAS: ") + expr + " failed with status " +
                        std::to_string(static_cast<int>(rc)),
                    file, line);
}

#define BENCH_CHECK_CUBLAS(call) check_cublas((call), #call, __FILE__, __LINE__)

// The textbook kernel: a 32×32 tile, 32×8 threads, four elements each.
template <class W>
__global__ void tile_kernel(const W* __restrict__ in, W* __restrict__ out, long long rows,
                            long long cols) {
  __shared__ W tile[32][33];
  long long x = blockIdx.x * 32LL + threadIdx.x;
  long long y = blockIdx.y * 32LL + threadIdx.y;
  for (int k = 0; k < 32; k += 8)
    if (x < cols && y + k < rows)
      tile[threadIdx.y + k][threadIdx.x] = in[(y + k) * cols + x];
  __syncthreads();
  x = blockIdx.y * 32LL + threadIdx.x;
  y = blockIdx.x * 32LL + threadIdx.y;
  for (int k = 0; k < 32; k += 8)
    if (x < rows && y + k < cols)
      out[(y + k) * rows + x] = tile[threadIdx.x][threadIdx.y + k];
}

template <class W>
void launch_tile(cudaStream_t s, const void* in, void* out, long long rows, long long cols) {
  const dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>((rows + 31) / 32));
  tile_kernel<W>
      <<<grid, dim3(32, 8), 0, s>>>(static_cast<const W*>(in), static_cast<W*>(out), rows, cols);
  CHECK_CUDA(cudaGetLastError());
}

} // namespace

std::string cublas_unavailable_reason() {
  return cublas().error;
}

struct Geam::Impl {
  cublasHandle_t handle = nullptr;
};

Geam::Geam(CUstream_st* stream) : impl_(std::make_shared<Impl>()) {
  const Cublas& c = cublas();
  if (!c.error.empty())
    throw CudaError(c.error + "; the geam baseline needs it", __FILE__, __LINE__);
  BENCH_CHECK_CUBLAS(c.create(&impl_->handle));
  const cublasStatus_t rc = c.set_stream(impl_->handle, stream);
  if (rc != CUBLAS_STATUS_SUCCESS) {
    c.destroy(impl_->handle);
    check_cublas(rc, "cublasSetStream(handle, stream)", __FILE__, __LINE__);
  }
}

Geam::~Geam() {
  if (impl_ && impl_->handle)
    cublas().destroy(impl_->handle); // nothing useful to do with a failure here
}

bool Geam::supports(std::int64_t rows, std::int64_t cols) noexcept {
  return rows > 0 && cols > 0 && rows <= INT_MAX && cols <= INT_MAX;
}

void Geam::transpose(DType t, const void* in, void* out, std::int64_t rows, std::int64_t cols) {
  // Row-major rows × cols is column-major cols × rows (lda = cols); C = Aᵀ is column-major
  // rows × cols (ldc = rows). With beta = 0, B (= C) is not read.
  const int m = static_cast<int>(rows), n = static_cast<int>(cols);
  const Cublas& c = cublas();
  cublasHandle_t h = impl_->handle;
  switch (t) {
  case DType::f32: {
    const float one = 1, zero = 0;
    BENCH_CHECK_CUBLAS(c.sgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                               static_cast<const float*>(in), n, &zero, static_cast<float*>(out), m,
                               static_cast<float*>(out), m));
    return;
  }
  case DType::f64: {
    const double one = 1, zero = 0;
    BENCH_CHECK_CUBLAS(c.dgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                               static_cast<const double*>(in), n, &zero, static_cast<double*>(out),
                               m, static_cast<double*>(out), m));
    return;
  }
  case DType::c64: {
    const cuComplex one{1, 0}, zero{0, 0};
    BENCH_CHECK_CUBLAS(c.cgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                               static_cast<const cuComplex*>(in), n, &zero,
                               static_cast<cuComplex*>(out), m, static_cast<cuComplex*>(out), m));
    return;
  }
  case DType::c128: {
    const cuDoubleComplex one{1, 0}, zero{0, 0};
    BENCH_CHECK_CUBLAS(c.zgeam(
        h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, static_cast<const cuDoubleComplex*>(in), n, &zero,
        static_cast<cuDoubleComplex*>(out), m, static_cast<cuDoubleComplex*>(out), m));
    return;
  }
  default:
    throw InputError("cuBLAS geam baseline: f32, f64, c64 or c128 only", __FILE__, __LINE__);
  }
}

bool tile_supports(std::int64_t rows, std::int64_t cols) noexcept {
  return rows > 0 && cols > 0 && (rows + 31) / 32 <= 65535 && (cols + 31) / 32 <= INT_MAX;
}

void tile_transpose(CUstream_st* stream, DType t, const void* in, void* out, std::int64_t rows,
                    std::int64_t cols) {
  switch (dtype_size(t)) {
  case 4:
    return launch_tile<unsigned>(stream, in, out, rows, cols);
  case 8:
    return launch_tile<unsigned long long>(stream, in, out, rows, cols);
  default:
    return launch_tile<uint4>(stream, in, out, rows, cols);
  }
}

struct CubSum::Impl {
  CUstream_st* stream = nullptr;
  DType t = DType::f64;
  long long n = 0;
  DeviceBuffer temp;
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

CubSum::CubSum(CUstream_st* stream, DType t, std::int64_t n) : impl_(std::make_shared<Impl>()) {
  if (t != DType::f32 && t != DType::f64)
    throw InputError("cub::DeviceReduce::Sum baseline: f32 or f64 only", __FILE__, __LINE__);
  impl_->stream = stream;
  impl_->t = t;
  impl_->n = static_cast<long long>(n);
  impl_->sum(nullptr, impl_->temp_bytes, nullptr, nullptr);
  impl_->temp = DeviceBuffer(std::max<std::size_t>(impl_->temp_bytes, 16));
}

CubSum::~CubSum() = default;

void CubSum::run(const void* in, void* out) {
  std::size_t bytes = impl_->temp_bytes;
  impl_->sum(impl_->temp.data(), bytes, in, out);
}

} // namespace tessera::cuda::bench_ref

// gpu_bench: one run measures, on the current GPU,
//   - a device-to-device cudaMemcpy of the same bytes (the ceiling),
//   - cuBLAS geam transposes and tessera's transpose (every tile variant) for f32, f64, c64,
//     c128 on 16384², 8192×32768 and 16411×16363, checked element for element against geam,
//   - cub::DeviceReduce::Sum against tessera's reproducible Sum (All) and the Rows and Cols
//     reductions, as read bandwidth,
//   - the staged host pipeline (pinned host data, chunks over 4 streams) against its phases.
// Timing: CUDA events around each launch, warm-up launches first, the median of the repeats.
// GB/s count bytes read plus bytes written (reads only for reductions).
//
//   gpu_bench [--json FILE] [--repeats N] [--quick]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_reduce.cuh>
#include <functional>
#include <string>
#include <vector>

#include "cuda/buffer.hpp"
#include "cuda/reduce.hpp"
#include "cuda/staged.hpp"
#include "cuda/stream.hpp"
#include "cuda/transpose.hpp"

namespace {

using tessera::DType;
namespace tc = tessera::cuda;

#define BENCH_CHECK(call)                                                                          \
  do {                                                                                             \
    const auto rc_ = (call);                                                                       \
    if (rc_ != 0) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call,                   \
                   static_cast<int>(rc_));                                                         \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

int g_repeats = 20;
constexpr int kWarmup = 3;

// Median milliseconds of `run` on stream s, each repeat timed by its own pair of events.
double median_ms(cudaStream_t s, const std::function<void()>& run) {
  for (int i = 0; i < kWarmup; ++i)
    run();
  std::vector<cudaEvent_t> ev(2 * g_repeats);
  for (auto& e : ev)
    BENCH_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < g_repeats; ++i) {
    BENCH_CHECK(cudaEventRecord(ev[2 * i], s));
    run();
    BENCH_CHECK(cudaEventRecord(ev[2 * i + 1], s));
  }
  BENCH_CHECK(cudaStreamSynchronize(s));
  BENCH_CHECK(cudaGetLastError());
  std::vector<double> t(g_repeats);
  for (int i = 0; i < g_repeats; ++i) {
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    t[i] = ms;
  }
  for (auto& e : ev)
    cudaEventDestroy(e);
  std::sort(t.begin(), t.end());
  return g_repeats % 2 ? t[g_repeats / 2] : 0.5 * (t[g_repeats / 2 - 1] + t[g_repeats / 2]);
}

// Random bits that are finite numbers of every type: words of (hash & 0x3fffffff) | sign are
// floats in [0, 2) and the upper words of doubles, so no NaN and no infinity anywhere.
__global__ void fill_kernel(unsigned* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    p[i] = (h & 0x3fffffffu) | (h & 0x80000000u);
  }
}

__global__ void diff_kernel(const unsigned* a, const unsigned* b, size_t n,
                            unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local)
    atomicAdd(count, local);
}

void fill(void* p, size_t bytes, unsigned seed) {
  fill_kernel<<<4096, 256>>>(static_cast<unsigned*>(p), bytes / 4, seed);
  BENCH_CHECK(cudaGetLastError());
}

unsigned long long differences(const void* a, const void* b, size_t bytes) {
  unsigned long long* d = nullptr;
  BENCH_CHECK(cudaMalloc(&d, sizeof *d));
  BENCH_CHECK(cudaMemset(d, 0, sizeof *d));
  diff_kernel<<<4096, 256>>>(static_cast<const unsigned*>(a), static_cast<const unsigned*>(b),
                             bytes / 4, d);
  unsigned long long h = 0;
  BENCH_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  cudaFree(d);
  return h;
}

// The obvious transpose, one element per thread: the reference every fast version must equal.
template <class W>
__global__ void naive_transpose(const W* in, W* out, long long rows, long long cols) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < rows * cols;
       k += (long long)gridDim.x * blockDim.x) {
    const long long i = k / cols, j = k - i * cols;
    out[j * rows + i] = in[k];
  }
}

void naive(DType t, long long rows, long long cols, const void* in, void* out) {
  const size_t e = t == DType::f32 ? 4 : t == DType::c128 ? 16 : 8;
  if (e == 4)
    naive_transpose<<<8192, 256>>>(static_cast<const unsigned*>(in), static_cast<unsigned*>(out),
                                   rows, cols);
  else if (e == 8)
    naive_transpose<<<8192, 256>>>(static_cast<const unsigned long long*>(in),
                                   static_cast<unsigned long long*>(out), rows, cols);
  else
    naive_transpose<<<8192, 256>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), rows,
                                   cols);
  BENCH_CHECK(cudaGetLastError());
  BENCH_CHECK(cudaDeviceSynchronize());
}

cublasStatus_t geam(cublasHandle_t h, DType t, long long rows, long long cols, const void* a,
                    void* c) {
  // Row-major rows × cols is column-major cols × rows (lda = cols); C = Aᵀ is column-major
  // rows × cols (ldc = rows). B = C with beta = 0 is not read.
  const int m = static_cast<int>(rows), n = static_cast<int>(cols);
  switch (t) {
  case DType::f32: {
    const float one = 1, zero = 0;
    return cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, static_cast<const float*>(a), n,
                       &zero, static_cast<float*>(c), m, static_cast<float*>(c), m);
  }
  case DType::f64: {
    const double one = 1, zero = 0;
    return cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, static_cast<const double*>(a), n,
                       &zero, static_cast<double*>(c), m, static_cast<double*>(c), m);
  }
  case DType::c64: {
    const cuComplex one{1, 0}, zero{0, 0};
    return cublasCgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, static_cast<const cuComplex*>(a), n,
                       &zero, static_cast<cuComplex*>(c), m, static_cast<cuComplex*>(c), m);
  }
  case DType::c128:
    break;
  }
  const cuDoubleComplex one{1, 0}, zero{0, 0};
  return cublasZgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                     static_cast<const cuDoubleComplex*>(a), n, &zero,
                     static_cast<cuDoubleComplex*>(c), m, static_cast<cuDoubleComplex*>(c), m);
}

struct Row {
  std::string group, what, dtype, shape;
  double ms, gbs, frac; // frac: of the copy (transposes) or of cub Sum (reductions)
  std::string note;
};
std::vector<Row> g_rows;

void add(Row r) {
  std::printf("%-10s %-22s %-5s %-12s %9.3f ms %8.1f GB/s %6.3f %s\n", r.group.c_str(),
              r.what.c_str(), r.dtype.c_str(), r.shape.c_str(), r.ms, r.gbs, r.frac,
              r.note.c_str());
  std::fflush(stdout);
  g_rows.push_back(std::move(r));
}

const char* name(DType t) {
  return t == DType::f32 ? "f32" : t == DType::f64 ? "f64" : t == DType::c64 ? "c64" : "c128";
}
size_t esize(DType t) {
  return t == DType::f32 ? 4 : t == DType::f64 ? 8 : t == DType::c64 ? 8 : 16;
}

void bench_transposes(cudaStream_t s, cublasHandle_t h, bool quick) {
  struct Shape {
    long long rows, cols;
  };
  std::vector<Shape> shapes = {{16384, 16384}, {8192, 32768}, {16411, 16363}};
  std::vector<DType> types = {DType::f32, DType::f64, DType::c64, DType::c128};
  if (quick) {
    shapes = {{4096, 4096}, {4099, 4093}};
  }
  for (const Shape& sh : shapes)
    for (DType t : types) {
      const size_t bytes = size_t(sh.rows) * sh.cols * esize(t);
      const std::string shape = std::to_string(sh.rows) + "x" + std::to_string(sh.cols);
      tc::DeviceBuffer in(bytes), out(bytes), ref(bytes);
      fill(in.data(), bytes, 12345u + static_cast<unsigned>(sh.rows));
      naive(t, sh.rows, sh.cols, in.data(), ref.data());
      const double moved = 2.0 * bytes; // read + write
      const double copy_ms = median_ms(s, [&] {
        BENCH_CHECK(cudaMemcpyAsync(out.data(), in.data(), bytes, cudaMemcpyDeviceToDevice, s));
      });
      const double copy_gbs = moved / copy_ms * 1e-6;
      add({"transpose", "cudaMemcpy D2D", name(t), shape, copy_ms, copy_gbs, 1.0, ""});
      BENCH_CHECK(cudaMemset(out.data(), 0, bytes)); // geam's B (= C, beta 0) holds no NaN
      const double geam_ms =
          median_ms(s, [&] { BENCH_CHECK(geam(h, t, sh.rows, sh.cols, in.data(), out.data())); });
      BENCH_CHECK(cudaStreamSynchronize(s));
      const unsigned long long geam_bad = differences(out.data(), ref.data(), bytes);
      add({"transpose", "cublas geam", name(t), shape, geam_ms, moved / geam_ms * 1e-6,
           copy_ms / geam_ms, geam_bad ? std::to_string(geam_bad) + " words differ" : "ok"});
      for (int v = 0; v < tc::transpose_variant_count(); ++v) {
        BENCH_CHECK(cudaMemset(out.data(), 0xff, bytes));
        const double ms = median_ms(s, [&] {
          tc::transpose_variant(s, t, v, in.data(), out.data(), sh.rows, sh.cols, sh.cols, sh.rows);
        });
        BENCH_CHECK(cudaStreamSynchronize(s));
        const unsigned long long bad = differences(out.data(), ref.data(), bytes);
        std::string note = bad ? "MISMATCH: " + std::to_string(bad) + " words" : "ok";
        note += ms < geam_ms ? ", faster than geam" : ", slower than geam";
        add({"transpose", "tessera " + tc::transpose_variant_name(t, v), name(t), shape, ms,
             moved / ms * 1e-6, copy_ms / ms, note});
      }
    }
}

void bench_reductions(cudaStream_t s, bool quick) {
  struct Shape {
    long long rows, cols;
  };
  std::vector<Shape> shapes = {{16384, 16384}, {16411, 16363}, {8192, 32768}};
  if (quick)
    shapes = {{4096, 4096}, {4099, 4093}};
  for (const Shape& sh : shapes)
    for (DType t : {DType::f32, DType::f64}) {
      const size_t n = size_t(sh.rows) * sh.cols;
      const size_t bytes = n * esize(t);
      const std::string shape = std::to_string(sh.rows) + "x" + std::to_string(sh.cols);
      tc::DeviceBuffer a(bytes), out(8 * size_t(sh.rows + sh.cols)), cub_out(16);
      fill(a.data(), bytes, 777u);
      // cub: sum in the data's own type, as a plain (not reproducible) reduction would.
      size_t temp_bytes = 0;
      if (t == DType::f32)
        BENCH_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, a.as<float>(), cub_out.as<float>(),
                                           static_cast<long long>(n), s));
      else
        BENCH_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, a.as<double>(),
                                           cub_out.as<double>(), static_cast<long long>(n), s));
      tc::DeviceBuffer temp(temp_bytes);
      const double cub_ms = median_ms(s, [&] {
        size_t tb = temp_bytes;
        if (t == DType::f32)
          BENCH_CHECK(cub::DeviceReduce::Sum(temp.data(), tb, a.as<float>(), cub_out.as<float>(),
                                             static_cast<long long>(n), s));
        else
          BENCH_CHECK(cub::DeviceReduce::Sum(temp.data(), tb, a.as<double>(), cub_out.as<double>(),
                                             static_cast<long long>(n), s));
      });
      const double cub_gbs = bytes / cub_ms * 1e-6;
      add({"reduce", "cub DeviceReduce::Sum", name(t), shape, cub_ms, cub_gbs, 1.0, "read"});
      tc::ReduceWorkspace ws;
      // One untimed pass over every case first: allocations and first launches stay out.
      for (tessera::Axis axis : {tessera::Axis::All, tessera::Axis::Rows, tessera::Axis::Cols})
        for (tessera::Op op : {tessera::Op::Sum, tessera::Op::Norm2, tessera::Op::Max}) {
          ws.reserve(s, axis, sh.rows, sh.cols);
          tc::reduce(s, op, axis, t, a.data(), sh.rows, sh.cols, sh.cols, out.as<double>(), ws);
        }
      BENCH_CHECK(cudaStreamSynchronize(s));
      for (auto [axis, aname] :
           {std::pair{tessera::Axis::All, "all"}, std::pair{tessera::Axis::Rows, "rows"},
            std::pair{tessera::Axis::Cols, "cols"}})
        for (tessera::Op op : {tessera::Op::Sum, tessera::Op::Norm2, tessera::Op::Max}) {
          ws.reserve(s, axis, sh.rows, sh.cols);
          const double ms = median_ms(s, [&] {
            tc::reduce(s, op, axis, t, a.data(), sh.rows, sh.cols, sh.cols, out.as<double>(), ws);
          });
          add({"reduce", std::string("tessera ") + std::string(tessera::op_name(op)) + " " + aname,
               name(t), shape, ms, bytes / ms * 1e-6, cub_ms / ms,
               "reproducible; frac = of cub Sum"});
        }
    }
}

void bench_staged(bool quick) {
  const long long n = quick ? 4096 : 16384;
  const DType t = DType::f32;
  const size_t bytes = size_t(n) * n * 4;
  tc::PinnedBuffer in(bytes), out(bytes);
  std::memset(in.data(), 1, bytes);
  tc::StreamPool pool;
  {
    // The host link alone: each direction by itself, then both at once on two streams.
    tc::DeviceBuffer d(2 * bytes);
    auto h2d = [&](cudaStream_t st) {
      BENCH_CHECK(cudaMemcpyAsync(d.data(), in.data(), bytes, cudaMemcpyHostToDevice, st));
    };
    auto d2h = [&](cudaStream_t st) {
      BENCH_CHECK(cudaMemcpyAsync(out.data(), static_cast<char*>(d.data()) + bytes, bytes,
                                  cudaMemcpyDeviceToHost, st));
    };
    const int saved = g_repeats;
    g_repeats = 5;
    const double up = median_ms(pool[0], [&] { h2d(pool[0]); });
    const double down = median_ms(pool[0], [&] { d2h(pool[0]); });
    cudaEvent_t e = nullptr;
    BENCH_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const double both = median_ms(pool[0], [&] {
      BENCH_CHECK(cudaEventRecord(e, pool[0]));
      BENCH_CHECK(cudaStreamWaitEvent(pool[1], e, 0));
      h2d(pool[0]);
      d2h(pool[1]);
      BENCH_CHECK(cudaEventRecord(e, pool[1]));
      BENCH_CHECK(cudaStreamWaitEvent(pool[0], e, 0));
    });
    cudaEventDestroy(e);
    g_repeats = saved;
    const std::string shape = std::to_string(bytes >> 20) + " MiB";
    add({"link", "H2D pinned", "-", shape, up, bytes / up * 1e-6, 1.0, ""});
    add({"link", "D2H pinned", "-", shape, down, bytes / down * 1e-6, 1.0, ""});
    add({"link", "H2D + D2H at once", "-", shape, both, 2.0 * bytes / both * 1e-6,
         (up + down) / both, "frac = (H2D + D2H alone) / both at once: 2 = full duplex"});
  }
  for (const tc::StagedOutput output : {tc::StagedOutput::Copy, tc::StagedOutput::Direct})
    for (size_t chunk : {size_t(32) << 20, size_t(64) << 20}) {
      tc::StagedTranspose staged(pool, chunk, output);
      staged.run(t, in.data(), out.data(), n, n); // warm-up
      const tc::StagedTimes ph = staged.phases(t, in.data(), out.data(), n, n);
      std::vector<double> totals;
      for (int i = 0; i < 5; ++i)
        totals.push_back(staged.run(t, in.data(), out.data(), n, n).total);
      std::sort(totals.begin(), totals.end());
      const double total = totals[2];
      const double largest = std::max({ph.h2d, ph.kernel, ph.d2h});
      const std::string shape = std::to_string(n) + "x" + std::to_string(n);
      const std::string how = ph.direct ? "kernel writes host memory" : "2-D D2H copies";
      const std::string c = std::to_string(chunk >> 20) + " MiB chunks, " +
                            std::to_string(ph.chunks) + " chunks, " + how;
      const std::string mode = ph.direct ? "staged-direct" : "staged-copy";
      add({mode, "H2D alone", "f32", shape, ph.h2d * 1e3, bytes / ph.h2d * 1e-9, 0, c});
      add({mode, ph.direct ? "kernels into host memory alone" : "kernels alone", "f32", shape,
           ph.kernel * 1e3, 2 * bytes / ph.kernel * 1e-9, 0, c});
      if (!ph.direct)
        add({mode, "D2H alone", "f32", shape, ph.d2h * 1e3, bytes / ph.d2h * 1e-9, 0, c});
      add({mode, "pipelined total", "f32", shape, total * 1e3, bytes / total * 1e-9,
           total / largest, "frac = total / largest phase (target <= 1.15)"});
    }
}

void write_json(const char* path, const cudaDeviceProp& p) {
  FILE* f = std::fopen(path, "w");
  if (!f)
    return;
  std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"sms\": %d,\n  \"repeats\": %d,\n  \"rows\": [\n",
               p.name, p.multiProcessorCount, g_repeats);
  for (size_t i = 0; i < g_rows.size(); ++i) {
    const Row& r = g_rows[i];
    std::fprintf(f,
                 "    {\"group\": \"%s\", \"what\": \"%s\", \"dtype\": \"%s\", \"shape\": \"%s\", "
                 "\"ms\": %.5f, \"gbs\": %.2f, \"frac\": %.4f, \"note\": \"%s\"}%s\n",
                 r.group.c_str(), r.what.c_str(), r.dtype.c_str(), r.shape.c_str(), r.ms, r.gbs,
                 r.frac, r.note.c_str(), i + 1 < g_rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

} // namespace

int main(int argc, char** argv) {
  const char* json = nullptr;
  bool quick = false;
  std::string only = "all";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
      g_repeats = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else {
      std::fprintf(stderr, "usage: gpu_bench [--json FILE] [--repeats N] [--quick] "
                           "[--only transpose|reduce|staged]\n");
      return 2;
    }
  }
  int dev = 0;
  BENCH_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  BENCH_CHECK(cudaGetDeviceProperties(&p, dev));
  std::printf("# %s, %d SMs, L2 %d MiB, repeats %d (median), warm-up %d\n", p.name,
              p.multiProcessorCount, p.l2CacheSize >> 20, g_repeats, kWarmup);
  cudaStream_t s = nullptr;
  BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h = nullptr;
  BENCH_CHECK(cublasCreate(&h));
  BENCH_CHECK(cublasSetStream(h, s));
  if (only == "all" || only == "transpose")
    bench_transposes(s, h, quick);
  if (only == "all" || only == "reduce")
    bench_reductions(s, quick);
  if (only == "all" || only == "staged")
    bench_staged(quick);
  if (json)
    write_json(json, p);
  cublasDestroy(h);
  cudaStreamDestroy(s);
  return 0;
}

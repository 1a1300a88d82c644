// Shared pieces of the `tessera bench --backend cuda` drivers (see bench_cuda_util.hpp).
#include "cli/bench/bench_cuda_util.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <set>

#include "cpu/reference.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "mpi/communicator.hpp"

namespace tessera::app::bench_cuda {

template <class T>
void upload_rows(void* dst, std::int64_t row0, std::int64_t nrows, std::int64_t cols) {
  if (nrows <= 0 || cols <= 0)
    return;
  const auto row_bytes = static_cast<std::int64_t>(sizeof(T)) * cols;
  const std::int64_t panel =
      std::min(nrows, std::max<std::int64_t>(1, (std::int64_t{64} << 20) / row_bytes));
  std::vector<T> buf(static_cast<std::size_t>(panel * cols));
  for (std::int64_t p = 0; p < nrows; p += panel) {
    const std::int64_t n = std::min(panel, nrows - p);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        buf[static_cast<std::size_t>(i * cols + j)] = value<T>(row0 + p + i, j);
    cuda::copy(static_cast<T*>(dst) + p * cols, buf.data(),
               static_cast<std::size_t>(n * row_bytes));
  }
}
template void upload_rows<float>(void*, std::int64_t, std::int64_t, std::int64_t);
template void upload_rows<double>(void*, std::int64_t, std::int64_t, std::int64_t);
template void upload_rows<std::complex<float>>(void*, std::int64_t, std::int64_t, std::int64_t);
template void upload_rows<std::complex<double>>(void*, std::int64_t, std::int64_t, std::int64_t);

std::string Sample::description() const {
  return fmt::format("yes ({} sampled row{}, {} elements)", rows, rows == 1 ? "" : "s", elements);
}

namespace {

template <class T>
Sample check_transposed_t(const T* out, std::int64_t row0, std::int64_t nrows,
                          std::int64_t out_cols) {
  Sample s;
  if (nrows <= 0 || out_cols <= 0)
    return s;
  constexpr std::int64_t kMaxRows = 64, kMaxCols = 65536;
  std::mt19937_64 rng(12345);
  std::set<std::int64_t> rows{0, nrows - 1};
  std::uniform_int_distribution<std::int64_t> pick(0, nrows - 1);
  while (static_cast<std::int64_t>(rows.size()) < std::min(kMaxRows, nrows))
    rows.insert(pick(rng));
  const std::int64_t width = std::min(out_cols, kMaxCols);
  std::uniform_int_distribution<std::int64_t> start(0, out_cols - width);
  std::vector<T> got(static_cast<std::size_t>(width));
  for (const std::int64_t r : rows) {
    // The first and the last row are checked from their first and up to their last column.
    const std::int64_t c0 = r == 0 ? 0 : (r == nrows - 1 ? out_cols - width : start(rng));
    cuda::copy(got.data(), out + r * out_cols + c0, static_cast<std::size_t>(width) * sizeof(T));
    for (std::int64_t c = 0; c < width; ++c) {
      const T want = value<T>(c0 + c, row0 + r); // out(row0 + r, c) = A(c, row0 + r)
      if (std::memcmp(&got[static_cast<std::size_t>(c)], &want, sizeof(T)) != 0)
        s.ok = false;
    }
    ++s.rows;
    s.elements += width;
  }
  return s;
}

} // namespace

Sample check_transposed(DType t, const void* out, std::int64_t row0, std::int64_t nrows,
                        std::int64_t out_cols) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    return check_transposed_t(static_cast<const T*>(out), row0, nrows, out_cols);
  });
}

std::vector<std::vector<double>> time_alternately(CUstream_st* s, const TimedRuns& runs, int warmup,
                                                  int repeat) {
  for (int w = 0; w < warmup; ++w)
    for (const auto& [name, f] : runs)
      f();
  cuda::synchronize(s);
  EventTimer timer;
  std::vector<std::vector<double>> t(runs.size());
  for (int k = 0; k < repeat; ++k)
    for (std::size_t i = 0; i < runs.size(); ++i)
      t[i].push_back(timer.time(s, runs[i].second));
  return t;
}

std::string device_description(const BenchArgs& args, int nranks) {
  const int index = cuda::current_device();
  std::string name = fmt::format("GPU {}", index);
  for (const auto& d : cuda::devices())
    if (d.index == index)
      name = fmt::format("{} (GPU {})", d.name, index);
  if (nranks == 1)
    return name;
  // Ranks of a node share its GPUs round-robin when there are more ranks than GPUs.
  const mpi::Communicator comm(args.comm);
  const int local = comm.node_local_size();
  const int gpus = std::min(local, std::max(1, cuda::device_count()));
  return fmt::format("{} rank{} on {} GPU{} of rank 0's node; rank 0: {}", local,
                     local == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s", name);
}

} // namespace tessera::app::bench_cuda

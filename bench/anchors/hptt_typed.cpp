// HPTT (MEASURE mode) on a row-major M x N matrix of any of tessera's element types, for the
// CPU figures of bench/RESULTS.md: the HPTT anchor of ../shared/anchors handles f64 only.
// Built and run by bench/hptt_typed.sh against the HPTT sources of the shared anchors; never
// part of tessera. GB/s = (bytes read + bytes written) / median time of 9 runs, as tessera counts.
//
//   hptt_typed M N f32|f64|c64|c128
#include <hptt.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

template <class F>
double median_seconds(F&& f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < 9; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T>
int run(int rows, int cols, const char* name) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const std::size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
  auto* a = static_cast<T*>(std::aligned_alloc(64, bytes));
  auto* b = static_cast<T*>(std::aligned_alloc(64, bytes));
#pragma omp parallel for
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = T(static_cast<float>(i % 1000003));
    b[i] = T(0);
  }
  const int perm[2] = {1, 0}, size[2] = {rows, cols};
  auto plan = hptt::create_plan(perm, 2, T(1), a, size, nullptr, T(0), b, nullptr, hptt::MEASURE,
                                omp_get_max_threads(), nullptr, true);
  const double t = median_seconds([&] { plan->execute(); });
  long bad = 0;
  for (std::size_t k = 0; k < n; k += 9973)
    if (!(b[(k % cols) * rows + k / cols] == a[k]))
      ++bad;
  std::printf("hptt(measure) %dx%d %s threads=%d: hptt %.2f GB/s (bad=%ld)\n", rows, cols, name,
              omp_get_max_threads(), 2.0 * static_cast<double>(n * sizeof(T)) / t / 1e9, bad);
  std::free(a);
  std::free(b);
  return bad == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: hptt_typed M N f32|f64|c64|c128\n");
    return 2;
  }
  const int rows = std::atoi(argv[1]), cols = std::atoi(argv[2]);
  const std::string t = argv[3];
  if (t == "f32")
    return run<float>(rows, cols, "f32");
  if (t == "f64")
    return run<double>(rows, cols, "f64");
  if (t == "c64")
    return run<std::complex<float>>(rows, cols, "c64");
  if (t == "c128")
    return run<std::complex<double>>(rows, cols, "c128");
  std::fprintf(stderr, "hptt_typed: unknown type %s\n", argv[3]);
  return 2;
}

// `tessera bench heat2d --backend cuda` on one rank: one step of the one-GPU heat2d tile path
// (cuda/heat2d_tiles.hpp, the library's tile kernel) beside a device-to-device copy of the field,
// and with --variants the benchmark's comparison tile kernels
// (bench/cuda/heat2d_tile_variants.hpp), all in the same process and alternating. --rows and
// --cols are ny and nx; the field traffic counted is the step's (TiledHeat2d::bytes_*).
#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/cuda/heat2d_tile_variants.hpp"
#include "cli/bench/bench_cuda_util.hpp"
#include "cli/bench/bench_drivers.hpp"
#include "core/throw.hpp"
#include "cuda/buffer.hpp"
#include "cuda/heat2d_tiles.hpp"
#include "cuda/stream.hpp"
#include "mpi/agreement.hpp"

namespace tessera::app::bench {

using namespace bench_cuda;

BenchReport local_heat2d_tiles_device(const BenchArgs& args) {
  BenchReport r = base_report(args, 1);
  r.what = "heat2d step by tiles (one GPU)";
  r.memory = "device";
  r.dtype = DType::f64;
  TESSERA_REQUIRE(cuda::TiledHeat2d::fits(args.cols, args.rows), InputError,
                  "bench heat2d: the tile step needs more than {} points a side, got {} x {}",
                  2 * cuda::tiles::kTile, args.rows, args.cols);
  const std::size_t bytes =
      static_cast<std::size_t>(args.rows) * static_cast<std::size_t>(args.cols) * sizeof(double);
  cuda::DeviceBuffer u, next, copy;
  std::unique_ptr<cuda::TiledHeat2d> tiled;
  mpi::collectively(args.comm, [&] {
    u = cuda::DeviceBuffer(bytes);
    next = cuda::DeviceBuffer(bytes);
    copy = cuda::DeviceBuffer(bytes);
    // Half Courant numbers of 1 (dt = dx² / alpha), Dirichlet.
    tiled = std::make_unique<cuda::TiledHeat2d>(args.cols, args.rows, 0.5, 0.5, false, 0.0);
  });
  upload_rows<double>(u.data(), 0, args.rows, args.cols);
  const cuda::unique_stream stream = cuda::make_stream();
  CUstream_st* s = stream.get();
  tiled->prepare(s, u.as<double>());
  r.kernel = "shared";

  // The timed contenders: name, launcher (nullptr: the library's kernel); the copy second.
  std::vector<std::pair<std::string, cuda::TileLauncher>> kernels = {{"tessera", nullptr}};
  if (args.variants)
    for (int k = 0; k < cuda::bench_ref::heat2d_tile_comparison_count(); ++k)
      kernels.emplace_back("variant " + cuda::bench_ref::heat2d_tile_comparison_name(k),
                           cuda::bench_ref::heat2d_tile_comparison(k));
  // Each run steps u to next and back: the state stays bounded whatever the repeats.
  TimedRuns runs;
  for (const auto& [name, launch] : kernels)
    runs.emplace_back(name, [&, launch] {
      tiled->set_tile_launcher(launch);
      tiled->half(s, u.as<double>());
      tiled->full(s, u.as<double>(), next.as<double>());
      tiled->half(s, next.as<double>());
      tiled->full(s, next.as<double>(), u.as<double>());
    });
  runs.insert(runs.begin() + 1,
              {"copy", [&] { cuda::copy_async(s, copy.data(), u.data(), bytes); }});
  const std::vector<std::vector<double>> t = time_alternately(s, runs, args.warmup, args.repeat);
  // Two steps a run; the copy reads and writes the field once.
  r.bytes_per_rank = r.bytes_total = 2.0 * (tiled->bytes_half() + tiled->bytes_full());
  r.reference = "copy";
  finish_rates(r, t[0], t[1], 2.0 * static_cast<double>(bytes));
  r.extras.emplace_back("copy_gbps", r.reference_gbps);
  r.extras.emplace_back("step_ms", 0.5e3 * summarize(t[0]).median);
  for (std::size_t i = 2; i < runs.size(); ++i) {
    const double m = summarize(t[i]).median;
    const std::string name = runs[i].first.substr(std::string("variant ").size());
    r.extras.emplace_back(name + "_step_ms", 0.5e3 * m);
    r.notes.push_back(fmt::format("{}: {:.3f} ms a step; tessera is {:.2f}x", name, 0.5e3 * m,
                                  m > 0 ? m / summarize(t[0]).median : 0.0));
  }
  r.notes.push_back(
      fmt::format("kernel: {}; {:.3f} ms a step", r.kernel, 0.5e3 * summarize(t[0]).median));
  r.checked = "no (the tile kernels' bits: CudaHeat2d.TileKernelsGiveTheSameBits)";
  return r;
}

} // namespace tessera::app::bench

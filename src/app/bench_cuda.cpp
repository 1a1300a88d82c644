// `tessera bench --backend cuda`: the GPU benchmark drivers.
#include "app/bench.hpp"
#include "core/throw.hpp"

namespace tessera::app {

BenchReport run_cuda_bench(const BenchArgs&) {
  TESSERA_THROW(NotCompiled, "the CUDA benchmark is not available in this build");
}

} // namespace tessera::app

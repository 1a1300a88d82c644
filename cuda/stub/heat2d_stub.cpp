// heat2d line kernels for builds without CUDA: each throws NotCompiled.
#include "core/throw.hpp"
#include "cuda/heat2d.hpp"

namespace tessera::cuda {

void heat2d_explicit(CUstream_st*, const double*, double*, std::int64_t, std::int64_t, double, bool,
                     double) {
  TESSERA_THROW(NotCompiled, "cuda::heat2d_explicit needs the CUDA backend, which this build of "
                             "tessera lacks");
}
void heat2d_add_boundary(CUstream_st*, double*, std::int64_t, std::int64_t, double) {
  TESSERA_THROW(NotCompiled, "cuda::heat2d_add_boundary needs the CUDA backend, which this build "
                             "of tessera lacks");
}

void heat2d_explicit_columns(CUstream_st*, const double*, double*, std::int64_t, std::int64_t,
                             double, bool, double) {
  TESSERA_THROW(NotCompiled, "cuda::heat2d_explicit_columns needs the CUDA backend, which this "
                             "build of tessera lacks");
}
void heat2d_solve_columns(CUstream_st*, const DeviceTridiag&, double*, double*, std::int64_t,
                          double, bool, double, bool) {
  TESSERA_THROW(NotCompiled, "cuda::heat2d_solve_columns needs the CUDA backend, which this build "
                             "of tessera lacks");
}
void heat2d_sine_error(CUstream_st*, const double*, double*, std::int64_t, std::int64_t,
                       const double*, const double*, double, double) {
  TESSERA_THROW(NotCompiled, "cuda::heat2d_sine_error needs the CUDA backend, which this build of "
                             "tessera lacks");
}

} // namespace tessera::cuda

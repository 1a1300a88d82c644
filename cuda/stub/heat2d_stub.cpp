// heat2d line kernels for builds without CUDA: each throws NotCompiled.
#include "core/throw.hpp"
#include "cuda/heat2d.hpp"
#include "cuda/heat2d_tiles.hpp"

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

TiledHeat2d::TiledHeat2d(std::int64_t, std::int64_t, double, double, bool, double) {
  TESSERA_THROW(NotCompiled, "cuda::TiledHeat2d needs the CUDA backend, which this build of "
                             "tessera lacks");
}
void TiledHeat2d::prepare(CUstream_st*, const double*) {
  TESSERA_THROW(NotCompiled, "cuda::TiledHeat2d needs the CUDA backend, which this build of "
                             "tessera lacks");
}
void TiledHeat2d::half(CUstream_st*, const double*) {
  TESSERA_THROW(NotCompiled, "cuda::TiledHeat2d needs the CUDA backend, which this build of "
                             "tessera lacks");
}
void TiledHeat2d::full(CUstream_st*, const double*, double*) {
  TESSERA_THROW(NotCompiled, "cuda::TiledHeat2d needs the CUDA backend, which this build of "
                             "tessera lacks");
}
double TiledHeat2d::bytes_prepare() const noexcept {
  return 0.0;
}
double TiledHeat2d::bytes_half() const noexcept {
  return 0.0;
}
double TiledHeat2d::bytes_full() const noexcept {
  return 0.0;
}

} // namespace tessera::cuda

// Builds without CUDA: the baselines of bench_cuda_ref.hpp throw NotCompiled.
#include "app/bench_cuda_ref.hpp"
#include "core/throw.hpp"

namespace tessera::app::cuda_ref {

struct Geam::Impl {};
struct CubSum::Impl {};

Geam::Geam(CUstream_st*) {
  TESSERA_THROW(NotCompiled, "cuBLAS is not available in this build");
}
Geam::~Geam() = default;
bool Geam::supports(std::int64_t, std::int64_t) noexcept {
  return false;
}
void Geam::transpose(DType, const void*, void*, std::int64_t, std::int64_t) {
  TESSERA_THROW(NotCompiled, "cuBLAS is not available in this build");
}

CubSum::CubSum(CUstream_st*, DType, std::int64_t) {
  TESSERA_THROW(NotCompiled, "CUB is not available in this build");
}
CubSum::~CubSum() = default;
void CubSum::run(const void*, void*) {
  TESSERA_THROW(NotCompiled, "CUB is not available in this build");
}

} // namespace tessera::app::cuda_ref

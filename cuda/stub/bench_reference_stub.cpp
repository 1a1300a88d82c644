// Builds without CUDA: the baselines of bench_reference.hpp throw NotCompiled.
#include "core/throw.hpp"
#include "cuda/bench_reference.hpp"

namespace tessera::cuda::bench_ref {

std::string cublas_unavailable_reason() {
  return "this build of tessera has no CUDA backend";
}

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

bool tile_supports(std::int64_t, std::int64_t) noexcept {
  return false;
}
void tile_transpose(CUstream_st*, DType, const void*, void*, std::int64_t, std::int64_t) {
  TESSERA_THROW(NotCompiled, "the textbook tile transpose needs the CUDA backend");
}

CubSum::CubSum(CUstream_st*, DType, std::int64_t) {
  TESSERA_THROW(NotCompiled, "CUB is not available in this build");
}
CubSum::~CubSum() = default;
void CubSum::run(const void*, void*) {
  TESSERA_THROW(NotCompiled, "CUB is not available in this build");
}

} // namespace tessera::cuda::bench_ref

// Kernel launchers for builds without CUDA: each throws NotCompiled.
#include "core/throw.hpp"
#include "cuda/pack.hpp"
#include "cuda/reduce.hpp"
#include "cuda/transpose.hpp"
#include "cuda/tridiag.hpp"

namespace tessera::cuda {

namespace {
[[noreturn]] void not_compiled(const char* what) {
  TESSERA_THROW(NotCompiled, "cuda::{} needs the CUDA backend, which this build of tessera lacks",
                what);
}
} // namespace

void transpose(CUstream_st*, DType, const void*, void*, std::int64_t, std::int64_t, std::int64_t,
               std::int64_t) {
  not_compiled("transpose");
}
int transpose_variant_count() {
  return 0;
}
std::string transpose_variant_name(DType, int) {
  return "?";
}
void transpose_variant(CUstream_st*, DType, int, const void*, void*, std::int64_t, std::int64_t,
                       std::int64_t, std::int64_t) {
  not_compiled("transpose_variant");
}
int transpose_choice(DType, const void*, const void*, std::int64_t, std::int64_t, std::int64_t,
                     std::int64_t) {
  return 0;
}

void pack_columns(CUstream_st*, DType, const void*, std::int64_t, std::int64_t, const std::int64_t*,
                  int, void*) {
  not_compiled("pack_columns");
}
void unpack_columns(CUstream_st*, DType, const void*, std::int64_t, const std::int64_t*, int, void*,
                    std::int64_t) {
  not_compiled("unpack_columns");
}

std::size_t ReduceWorkspace::double_capacity() const noexcept {
  return 0;
}
void ReduceWorkspace::reserve(CUstream_st*, Axis, std::int64_t, std::int64_t, int) {
  not_compiled("ReduceWorkspace");
}
void reduce(CUstream_st*, Op, Axis, DType, const void*, std::int64_t, std::int64_t, std::int64_t,
            double*, ReduceWorkspace&) {
  not_compiled("reduce");
}
void reduce_fused(CUstream_st*, const std::vector<Op>&, Axis, DType, const void*, std::int64_t,
                  std::int64_t, std::int64_t, double* const*, ReduceWorkspace&) {
  not_compiled("reduce_fused");
}
void reduce_rows(CUstream_st*, Op, DType, const void*, std::int64_t, std::int64_t, std::int64_t,
                 double*) {
  not_compiled("reduce_rows");
}
void reduce_col_groups(CUstream_st*, Op, DType, const void*, std::int64_t, std::int64_t,
                       std::int64_t, double*) {
  not_compiled("reduce_col_groups");
}
void fold_rows(CUstream_st*, Op, DType, const void*, std::int64_t, std::int64_t, std::int64_t,
               double*) {
  not_compiled("fold_rows");
}
void combine_col_groups(CUstream_st*, Op, const double*, std::int64_t, std::int64_t, double*) {
  not_compiled("combine_col_groups");
}
void reduce_all(CUstream_st*, Op, DType, const void*, std::int64_t, std::int64_t, std::int64_t,
                double*, ReduceWorkspace&) {
  not_compiled("reduce_all");
}
void reduce_cols(CUstream_st*, Op, DType, const void*, std::int64_t, std::int64_t, std::int64_t,
                 double*, ReduceWorkspace&) {
  not_compiled("reduce_cols");
}
void fill_identity(CUstream_st*, Op, double*, std::int64_t) {
  not_compiled("fill_identity");
}
void finalize(CUstream_st*, Op, double*, std::int64_t, double) {
  not_compiled("finalize");
}

void thomas_batched(CUstream_st*, const double*, const double*, const double*, double*,
                    const BatchLayout&, DeviceBuffer&) {
  not_compiled("thomas_batched");
}
void cyclic_batched(CUstream_st*, const double*, const double*, const double*, double*,
                    const BatchLayout&, DeviceBuffer&) {
  not_compiled("cyclic_batched");
}
DeviceTridiag::DeviceTridiag(const cpu::ConstTridiag&) {
  not_compiled("DeviceTridiag");
}
void DeviceTridiag::solve(CUstream_st*, double*, const BatchLayout&) const {
  not_compiled("DeviceTridiag::solve");
}

} // namespace tessera::cuda

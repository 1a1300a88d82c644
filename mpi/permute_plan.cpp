// PermutePlan: checks its arguments and that every rank passed the same ones, resolves the
// backend, lays out the slabs (mpi/permute_slabs.hpp) and makes the engine and the exchange.
// Each execute: one local permutation when nothing crosses ranks; else pack, one all-to-all
// (mpi/message_exchange.hpp: counts beyond INT_MAX travel as derived datatypes), unpack.
#include "mpi/permute_plan.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/permute_layout.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/communicator.hpp"
#include "mpi/message_exchange.hpp"
#include "mpi/permute_engine.hpp"
#include "mpi/permute_slabs.hpp"

namespace tessera {

namespace {

// A permutation moves bytes, never values: a word type of the element's size carries any dtype,
// the integer types included.
MPI_Datatype permute_word_type(std::size_t element_size) {
  switch (element_size) {
  case 1:
    return MPI_UINT8_T;
  case 2:
    return MPI_UINT16_T;
  case 4:
    return MPI_UINT32_T;
  case 8:
    return MPI_UINT64_T;
  default:
    return MPI_CXX_DOUBLE_COMPLEX;
  }
}

template <class T>
std::string permute_list(const std::vector<T>& v) {
  std::string s = "(";
  for (std::size_t k = 0; k < v.size(); ++k)
    s += (k ? ", " : "") + std::to_string(v[k]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// InputError unless every product of lengths the layout takes (lengths of 0 left out, as a
// product of the others may be taken too) fits 64-bit byte offsets.
void check_permute_size(const std::vector<std::int64_t>& shape, DType dtype) {
  std::int64_t n = 1;
  const auto limit = INT64_MAX / static_cast<std::int64_t>(dtype_size(dtype));
  for (const std::int64_t len : shape) {
    TESSERA_REQUIRE(len <= 1 || n <= limit / len, InputError,
                    "permute plan: an array of shape {} is too large to address",
                    permute_list(shape));
    n *= len <= 1 ? 1 : len;
  }
}

// Collective: InputError on every rank unless every rank passed the same shape, axes and dtype
// (different ones would make the ranks' messages disagree in size).
void agree_on_permutation(MPI_Comm comm, const std::vector<std::int64_t>& shape,
                          const std::vector<int>& axes, DType dtype) {
  // [dtype, rank, shape, axes] padded to the largest rank, then negated: one MIN reduction
  // gives both the minimum and the maximum of every entry.
  constexpr std::size_t n = 2 + 2 * max_permute_rank;
  std::array<std::int64_t, 2 * n> v{};
  v.fill(-1);
  v[0] = static_cast<std::int64_t>(dtype);
  v[1] = static_cast<std::int64_t>(shape.size());
  for (std::size_t k = 0; k < shape.size(); ++k) {
    v[2 + k] = shape[k];
    v[2 + max_permute_rank + k] = axes[k];
  }
  for (std::size_t k = 0; k < n; ++k)
    v[n + k] = -v[k];
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MIN,
                          comm));
  const auto same = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to; ++k)
      if (v[k] != -v[n + k])
        return false;
    return true;
  };
  const char* what = !same(0, 1)                      ? "dtypes"
                     : !same(1, 2)                    ? "ranks (numbers of dimensions)"
                     : !same(2, 2 + max_permute_rank) ? "shapes"
                     : !same(2 + max_permute_rank, n) ? "axes"
                                                      : nullptr;
  mpi::collectively(comm, [&] {
    TESSERA_REQUIRE(what == nullptr, InputError,
                    "permute plan: the ranks were given different {}; every rank must pass the "
                    "same shape, axes and dtype (this rank: shape {}, axes {}, {})",
                    what, permute_list(shape), permute_list(axes), dtype_name(dtype));
  });
}

PermuteBlock permute_block(const std::vector<std::int64_t>& global, const BlockDistribution& d,
                           int rank) {
  PermuteBlock b{d.begin(rank), d.rows(rank), 1, global};
  b.shape[0] = b.length;
  for (const std::int64_t n : b.shape)
    b.elements *= n;
  return b;
}

} // namespace

struct PermutePlan::Impl {
  mpi::Communicator comm; // a duplicate: the plan's messages never mix with the caller's
  DType dtype;
  PermuteOptions options;
  Backend backend = Backend::Cpu;
  PermuteSlabs slabs;
  PermuteBlock in_block, out_block;
  std::unique_ptr<PermuteEngine> engine;
  mpi::MessageExchange exchange;

  Impl(MPI_Comm c, DType t, PermuteOptions o) : comm(c), dtype(t), options(o) {}
};

PermutePlan::PermutePlan(std::vector<std::int64_t> shape, std::vector<int> axes, DType dtype,
                         MPI_Comm comm, Backend backend, PermuteOptions options)
    : impl_(std::make_unique<Impl>(comm, dtype, options)) {
  auto& I = *impl_;
  mpi::collectively(I.comm.get(), [&] {
    check_permutation(shape, axes);
    check_permute_size(shape, dtype);
    TESSERA_REQUIRE(options.message_limit >= 2, InputError,
                    "the message limit must be at least 2 elements, got {}", options.message_limit);
  });
  agree_on_permutation(I.comm.get(), shape, axes, dtype);
  I.backend = mpi::resolve_backend(backend, I.comm.get());
  I.slabs = PermuteSlabs(shape, axes, I.comm.rank(), I.comm.size());
  I.in_block = permute_block(I.slabs.shape, I.slabs.in, I.comm.rank());
  I.out_block = permute_block(I.slabs.out_shape, I.slabs.out, I.comm.rank());
  const std::size_t element = dtype_size(dtype);
  mpi::collectively(I.comm.get(), [&] {
    I.engine = make_permute_engine(I.backend, I.slabs, element, options.memory);
    const PermuteSlabs& s = I.slabs;
    if (s.exchange)
      I.exchange = mpi::MessageExchange(I.comm.get(), permute_word_type(element), element,
                                        s.send_counts, s.send_offsets, s.recv_counts,
                                        s.recv_offsets, options.message_limit);
  });
}

PermutePlan::~PermutePlan() = default;
PermutePlan::PermutePlan(PermutePlan&&) noexcept = default;
PermutePlan& PermutePlan::operator=(PermutePlan&&) noexcept = default;

void PermutePlan::execute(const void* in, void* out) {
  execute_as(impl_->dtype, in, out);
}

void PermutePlan::execute_as(DType t, const void* in, void* out) {
  auto& I = *impl_;
  const PermuteSlabs& s = I.slabs;
  // Agreed before any collective step: a rank whose arguments are wrong would never enter it.
  mpi::collectively(I.comm.get(), [&] {
    TESSERA_REQUIRE(t == I.dtype, InputError,
                    "permute plan was built for {} data but execute() got {}", dtype_name(I.dtype),
                    dtype_name(t));
    TESSERA_REQUIRE(in != nullptr || s.in_elements == 0, InputError,
                    "permute plan: execute() got a null input block");
    TESSERA_REQUIRE(out != nullptr || s.out_elements == 0, InputError,
                    "permute plan: execute() got a null output block");
    const auto a = reinterpret_cast<std::uintptr_t>(in);
    const auto b = reinterpret_cast<std::uintptr_t>(out);
    const std::size_t na = static_cast<std::size_t>(s.in_elements) * dtype_size(I.dtype);
    const std::size_t nb = static_cast<std::size_t>(s.out_elements) * dtype_size(I.dtype);
    TESSERA_REQUIRE(na == 0 || nb == 0 || a + na <= b || b + nb <= a, InputError,
                    "permute plan: the input and output blocks overlap (the permutation is out "
                    "of place)");
  });
  if (!s.exchange) {
    I.engine->permute(in, out);
    return;
  }
  // A GPU engine can fail here on one rank: agreed, as no rank may then enter the exchange.
  mpi::collectively(I.comm.get(), [&] { I.engine->pack(in); });
  I.exchange.alltoallv(I.engine->send_buffer(), I.engine->recv_buffer());
  I.engine->unpack(out);
}

const std::vector<std::int64_t>& PermutePlan::input_shape() const noexcept {
  return impl_->slabs.shape;
}
const std::vector<std::int64_t>& PermutePlan::output_shape() const noexcept {
  return impl_->slabs.out_shape;
}
const std::vector<int>& PermutePlan::axes() const noexcept {
  return impl_->slabs.axes;
}
const PermuteBlock& PermutePlan::input_block() const noexcept {
  return impl_->in_block;
}
const PermuteBlock& PermutePlan::output_block() const noexcept {
  return impl_->out_block;
}

PermuteBlock PermutePlan::input_block(int rank) const {
  const auto& I = *impl_;
  TESSERA_REQUIRE(rank >= 0 && rank < I.comm.size(), InputError,
                  "permute plan: rank {} is outside 0..{}", rank, I.comm.size() - 1);
  return permute_block(I.slabs.shape, I.slabs.in, rank);
}
PermuteBlock PermutePlan::output_block(int rank) const {
  const auto& I = *impl_;
  TESSERA_REQUIRE(rank >= 0 && rank < I.comm.size(), InputError,
                  "permute plan: rank {} is outside 0..{}", rank, I.comm.size() - 1);
  return permute_block(I.slabs.out_shape, I.slabs.out, rank);
}

DType PermutePlan::dtype() const noexcept {
  return impl_->dtype;
}
Backend PermutePlan::backend() const noexcept {
  return impl_->backend;
}
Memory PermutePlan::memory() const noexcept {
  return impl_->options.memory;
}
bool PermutePlan::exchanges() const noexcept {
  return impl_->slabs.exchange;
}

} // namespace tessera

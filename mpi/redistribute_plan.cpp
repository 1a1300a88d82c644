// RedistributePlan: the pieces from intersect_layouts, split into rounds that fit the buffer
// bound (redistribute_rounds.hpp), a MessageExchange per round, and either the CPU copy loops
// (cpu/redistribute_copy.hpp) run by OpenMP threads over the pieces or, for device memory, the
// GPU's (mpi/redistribute_device.hpp).
#include <tessera/redistribute_plan.hpp>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "core/check.hpp"
#include "core/dtype.hpp"
#include "core/throw.hpp"
#include "cpu/redistribute_copy.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/communicator.hpp"
#include "mpi/message_exchange.hpp"
#include "mpi/mpi_type.hpp"
#include "mpi/redistribute_device.hpp"
#include "mpi/redistribute_pieces.hpp"
#include "mpi/redistribute_relabel.hpp"
#include "mpi/redistribute_rounds.hpp"

namespace tessera {

namespace {

cpu::BlockStrides redistribute_strides(const Layout& l, int rank) {
  const std::int64_t ld = l.leading_dimension(rank);
  if (l.storage() == StorageOrder::RowMajor)
    return {ld, 1, true};
  return {1, ld, false};
}

template <class T>
T redistribute_scalar(std::complex<double> v) {
  if constexpr (cpu::is_complex_element<T>::value)
    return T(static_cast<typename T::value_type>(v.real()),
             static_cast<typename T::value_type>(v.imag()));
  else
    return static_cast<T>(v.real());
}

// Auto: the CPU for host memory (the GPU path would copy it there and back for work the host's
// cores do at memory speed), the GPU for device memory. Collective. Host memory takes the CPU
// path on either backend, so Auto then chooses nothing worth a log line, and asks the CUDA
// driver nothing (the tools that redistribute host data never start CUDA).
Backend redistribute_backend(Backend requested, Memory memory, MPI_Comm comm) {
  const bool gpu = requested == Backend::Cuda || memory == Memory::Device;
  mpi::collectively(comm, [&] {
    TESSERA_REQUIRE(!gpu || cuda::compiled(), NotCompiled,
                    "redistribute: {} needs the CUDA backend, which this build of tessera lacks "
                    "(configure with TESSERA_ENABLE_CUDA=ON where nvcc and the CUDA toolkit are "
                    "installed)",
                    memory == Memory::Device ? "device memory" : "the cuda backend");
    TESSERA_REQUIRE(memory == Memory::Host || requested != Backend::Cpu, InputError,
                    "redistribute: the CPU backend takes blocks in host memory; device memory "
                    "needs the cuda (or auto) backend");
  });
  if (memory == Memory::Host)
    return requested == Backend::Auto ? Backend::Cpu : mpi::resolve_backend(requested, comm);
  return mpi::resolve_backend(Backend::Cuda, comm); // InputError where a rank has no GPU
}

} // namespace

struct RedistributePlan::Impl {
  explicit Impl(MPI_Comm c) : comm(c) {}

  DType dtype = DType::f64;
  Backend backend = Backend::Cpu;
  RedistributeOptions options;
  Layout from;   // op(A)'s window, read through A's memory
  Layout to;     // B's window
  Layout target; // B's layout, relabelled where asked
  std::vector<int> relabelling;
  mpi::Communicator comm; // a duplicate: the plan's messages never mix with the caller's
  int rank = 0;
  RedistributePieces pieces; // the local ones; those that travel are in rounds
  std::vector<RedistributeRound> rounds;
  std::vector<mpi::MessageExchange> exchanges;  // one per round
  AlignedBuffer send_buffer, recv_buffer;       // the CPU path's
  std::unique_ptr<DeviceRedistribution> device; // the GPU path, for device memory
  RedistributeTraffic traffic;

  bool on_device() const noexcept { return options.memory == Memory::Device; }

  void schedule(const Layout& a, std::int64_t max_buffer_bytes);

  template <class T>
  void run(const T* a, T* b, std::complex<double> alpha, std::complex<double> beta) {
    const cpu::BlockStrides src = redistribute_strides(from, rank);
    const cpu::BlockStrides dst = redistribute_strides(to, rank);
    const cpu::ScaleUpdate<T> update{redistribute_scalar<T>(alpha), redistribute_scalar<T>(beta),
                                     options.op == MatrixOp::ConjTranspose};
    T* send = send_buffer.as<T>();
    T* recv = recv_buffer.as<T>();
    for (std::size_t round = 0; round < rounds.size(); ++round) {
      const RedistributeRound& r = rounds[round];
      const auto nsend = static_cast<std::int64_t>(r.sends.size());
      // The kept pieces go with the first round's.
      const auto nlocal = round == 0 ? static_cast<std::int64_t>(pieces.local.size()) : 0;
      const auto nrecv = static_cast<std::int64_t>(r.recvs.size());
#pragma omp parallel for schedule(dynamic)
      for (std::int64_t k = 0; k < nsend; ++k) {
        const RedistributePiece& p = r.sends[static_cast<std::size_t>(k)];
        cpu::pack_rectangle(a + p.src_offset, src, p.rows, p.cols, send + p.buffer_offset);
      }
      exchanges[round].alltoallv(send, recv);
      // The kept pieces and the received ones write disjoint parts of B: one parallel loop.
#pragma omp parallel for schedule(dynamic)
      for (std::int64_t k = 0; k < nlocal + nrecv; ++k) {
        if (k < nlocal) {
          const RedistributePiece& p = pieces.local[static_cast<std::size_t>(k)];
          cpu::copy_rectangle(a + p.src_offset, src, p.rows, p.cols, b + p.dst_offset, dst, update);
        } else {
          const RedistributePiece& p = r.recvs[static_cast<std::size_t>(k - nlocal)];
          cpu::unpack_rectangle(recv + p.buffer_offset, src.row_major, p.rows, p.cols,
                                b + p.dst_offset, dst, update);
        }
      }
    }
  }
};

RedistributePlan::RedistributePlan(const Layout& a, const Layout& b, DType dtype, MPI_Comm comm,
                                   RedistributeOptions options)
    : RedistributePlan(a, b, dtype, comm, Backend::Auto, options) {}

RedistributePlan::RedistributePlan(const Layout& a, const Layout& b, DType dtype, MPI_Comm comm,
                                   Backend backend, RedistributeOptions options)
    : impl_(std::make_unique<Impl>(comm)) {
  const int size = impl_->comm.size();
  impl_->rank = impl_->comm.rank();
  TESSERA_REQUIRE(a.nranks() == size && b.nranks() == size, InputError,
                  "redistribute: layouts over {} and {} ranks on a communicator of {}", a.nranks(),
                  b.nranks(), size);
  // A leading dimension shorter than a local line would make blocks overlap; caught on every
  // rank together (each knows only its own).
  mpi::collectively(impl_->comm.get(), [&] {
    for (const Layout* l : {&a, &b}) {
      const Shape s = l->local_shape(impl_->rank);
      const std::int64_t line = l->storage() == StorageOrder::RowMajor ? s.cols : s.rows;
      TESSERA_REQUIRE(s.empty() || l->leading_dimension(impl_->rank) >= line, InputError,
                      "redistribute: leading dimension {} on rank {} is shorter than its local "
                      "{} block",
                      l->leading_dimension(impl_->rank), impl_->rank, s.str());
    }
  });
  const bool transpose = options.op != MatrixOp::None;
  if (options.rows < 0 || options.cols < 0) {
    options.rows = b.global().rows - options.b_row;
    options.cols = b.global().cols - options.b_col;
  }
  const std::int64_t a_rows = transpose ? options.cols : options.rows;
  const std::int64_t a_cols = transpose ? options.rows : options.cols;
  impl_->dtype = dtype;
  impl_->options = options;
  const Layout a_window = a.window(options.a_row, options.a_col, a_rows, a_cols);
  impl_->from = transpose ? a_window.transposed() : a_window;
  if (options.relabel) {
    TESSERA_REQUIRE(options.b_row == 0 && options.b_col == 0 && options.rows == b.global().rows &&
                        options.cols == b.global().cols,
                    InputError, "redistribute: relabel needs the whole of B, not a {} x {} part",
                    options.rows, options.cols);
    TESSERA_REQUIRE(options.beta == 0.0, InputError,
                    "redistribute: relabel needs beta = 0 (B's old values cannot follow)");
  }
  impl_->relabelling.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    impl_->relabelling[static_cast<std::size_t>(r)] = r;
  impl_->target = b;
  if (options.relabel) {
    std::vector<int> relabelling = choose_relabelling(impl_->from, b);
    if (relabelling != impl_->relabelling) {
      impl_->target = relabel_layout(b, relabelling);
      impl_->relabelling = std::move(relabelling);
    }
  }
  impl_->to = impl_->target.window(options.b_row, options.b_col, options.rows, options.cols);
  impl_->pieces = intersect_layouts(impl_->from, impl_->to, impl_->rank);
  impl_->backend = redistribute_backend(backend, options.memory, impl_->comm.get());

  impl_->schedule(a, options.max_buffer_bytes);
  if (impl_->on_device())
    mpi::collectively(impl_->comm.get(), [&] {
      TESSERA_REQUIRE(dtype == DType::f32 || dtype == DType::f64 || dtype == DType::c64 ||
                          dtype == DType::c128,
                      InputError, "redistribute: the GPU path takes f32, f64, c64 or c128, not {}",
                      dtype_name(dtype));
      impl_->device = std::make_unique<DeviceRedistribution>(
          dtype, impl_->rounds, impl_->pieces.local, redistribute_strides(impl_->from, impl_->rank),
          redistribute_strides(impl_->to, impl_->rank));
    });
}

// The rounds, their exchanges and buffers, and the traffic figures. Collective: the rounds are the
// most any rank needs.
void RedistributePlan::Impl::schedule(const Layout& a, std::int64_t max_buffer_bytes) {
  const auto element = static_cast<std::int64_t>(dtype_size(dtype));
  const auto held = [this](const Layout& l) {
    const Shape s = l.local_shape(rank);
    return s.rows * s.cols;
  };
  mpi::collectively(comm.get(), [&] {
    TESSERA_REQUIRE(max_buffer_bytes >= 0, InputError,
                    "redistribute: max_buffer_bytes must not be negative (0: one local block), "
                    "got {} on rank {}",
                    max_buffer_bytes, rank);
  });
  const std::int64_t limit =
      max_buffer_bytes > 0 ? max_buffer_bytes : std::max(held(a), held(target)) * element;
  std::int64_t nrounds = rounds_needed(pieces, limit / element);
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &nrounds, 1, MPI_INT64_T, MPI_MAX, comm.get()));
  rounds = split_into_rounds(pieces, nrounds, redistribute_strides(from, rank),
                             redistribute_strides(to, rank));
  std::int64_t send_most = 0, recv_most = 0;
  for (const RedistributeRound& r : rounds) {
    exchanges.emplace_back(comm.get(), mpi::mpi_type(dtype), static_cast<std::size_t>(element),
                           r.send_counts, r.send_offsets, r.recv_counts, r.recv_offsets);
    send_most = std::max(send_most, r.send_total);
    recv_most = std::max(recv_most, r.recv_total);
  }
  if (!on_device()) { // the GPU path has buffers of its own
    send_buffer = AlignedBuffer(static_cast<std::size_t>(send_most * element), "redistribute send");
    recv_buffer =
        AlignedBuffer(static_cast<std::size_t>(recv_most * element), "redistribute receive");
  }
  traffic = {pieces.send_total * element,       pieces.recv_total * element,
             pieces.local_total * element,      pieces.send_total * element,
             (send_most + recv_most) * element, nrounds};
  // The rounds hold the pieces that travel now.
  pieces.sends = {};
  pieces.recvs = {};
}

RedistributePlan::~RedistributePlan() = default;
RedistributePlan::RedistributePlan(RedistributePlan&&) noexcept = default;
RedistributePlan& RedistributePlan::operator=(RedistributePlan&&) noexcept = default;

void RedistributePlan::execute(const void* a, void* b) {
  execute_as(impl_->dtype, a, b, impl_->options.alpha, impl_->options.beta);
}

void RedistributePlan::execute(const void* a, void* b, std::complex<double> alpha,
                               std::complex<double> beta) {
  execute_as(impl_->dtype, a, b, alpha, beta);
}

void RedistributePlan::execute_as(DType t, const void* a, void* b, std::complex<double> alpha,
                                  std::complex<double> beta) {
  // Checked on every rank before the exchange, so that a bad argument on one rank raises the
  // error everywhere instead of leaving the others waiting.
  mpi::collectively(impl_->comm.get(), [&] {
    TESSERA_REQUIRE(t == impl_->dtype, InputError, "redistribute: {} data for a {} plan",
                    dtype_name(t), dtype_name(impl_->dtype));
    const RedistributePieces& p = impl_->pieces;
    TESSERA_REQUIRE(a != nullptr || (p.send_total == 0 && p.local_total == 0), InputError,
                    "redistribute: no A block on rank {}, which holds part of A", impl_->rank);
    TESSERA_REQUIRE(b != nullptr || (p.recv_total == 0 && p.local_total == 0), InputError,
                    "redistribute: no B block on rank {}, which holds part of B", impl_->rank);
    TESSERA_REQUIRE(!impl_->options.relabel || beta == 0.0, InputError,
                    "redistribute: a relabelling plan needs beta = 0 (B's old values cannot "
                    "follow)");
    if (impl_->on_device())
      for (const void* block : {a, static_cast<const void*>(b)})
        TESSERA_REQUIRE(block == nullptr || cuda::is_device_pointer(block), InputError,
                        "redistribute: the plan takes device memory, but the {} block on rank {} "
                        "is not on its GPU",
                        block == a ? "A" : "B", impl_->rank);
  });
  if (impl_->on_device()) {
    impl_->device->run(a, b, impl_->exchanges,
                       {alpha, beta, impl_->options.op == MatrixOp::ConjTranspose});
    return;
  }
  dispatch_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    impl_->run(static_cast<const T*>(a), static_cast<T*>(b), alpha, beta);
  });
}

std::complex<double> RedistributePlan::options_alpha() const noexcept {
  return impl_->options.alpha;
}
std::complex<double> RedistributePlan::options_beta() const noexcept {
  return impl_->options.beta;
}

DType RedistributePlan::dtype() const noexcept {
  return impl_->dtype;
}
Backend RedistributePlan::backend() const noexcept {
  return impl_->backend;
}
Memory RedistributePlan::memory() const noexcept {
  return impl_->options.memory;
}
const RedistributeTraffic& RedistributePlan::traffic() const noexcept {
  return impl_->traffic;
}
const Layout& RedistributePlan::target() const noexcept {
  return impl_->target;
}
const std::vector<int>& RedistributePlan::relabelling() const noexcept {
  return impl_->relabelling;
}

} // namespace tessera

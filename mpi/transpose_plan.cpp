// TransposePlan: validates and builds everything collectively, picks the exchange algorithm
// (a timed trial of each on the first execute when asked for Auto), then runs the driver.
#include "mpi/transpose_plan.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/check.hpp"
#include "core/log.hpp"
#include "core/progress.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/communicator.hpp"
#include "mpi/mpi_type.hpp"
#include "mpi/nccl_comm.hpp"
#include "mpi/transpose_driver.hpp"

namespace tessera {

struct TransposePlan::Impl {
  mpi::Communicator comm;
  TransposeLayout layout;
  DType dtype;
  Backend backend = Backend::Cpu;
  TransposeOptions options;
  Exchange algorithm = Exchange::Auto;
  bool shared = false;      // more than one rank, all on one node
  bool prepared = false;    // the exchange buffers exist
  mpi::SharedWindow window; // the engine's send buffer when `shared`
  mpi::SharedWindow inputs; // input_buffer(), once asked for
  std::unique_ptr<TransposeEngine> engine;
  mpi::MessageExchange exchange;
  bool nccl_usable = false; // Nccl may run: explicitly asked for, or a candidate of Auto
  mpi::NcclComm nccl;       // built by prepare() when nccl_usable

  Impl(MPI_Comm c, DType t, TransposeOptions o) : comm(c), dtype(t), options(o) {}

  TransposeRun context() {
    TransposeRun run{*engine,           exchange,   layout,
                     dtype_size(dtype), comm.get(), window ? &window : nullptr};
    run.nccl = nccl ? &nccl : nullptr;
    return run;
  }

  // Buffers for the exchanges, on the first execute that needs them (collective): a plan whose
  // input always lies in input_buffer() never allocates them.
  void prepare() {
    if (prepared)
      return;
    const bool nccl_only = options.algorithm == Exchange::Nccl;
    if (shared && !nccl_only)
      window = mpi::SharedWindow(comm.get(), static_cast<std::size_t>(layout.send_elements()) *
                                                 dtype_size(dtype));
    const bool need_recv =
        comm.size() > 1 && options.algorithm != Exchange::SharedMemory && !nccl_only;
    mpi::collectively(comm.get(),
                      [&] { engine->prepare(window ? window.local() : nullptr, need_recv); });
    if (nccl_usable && !nccl) {
      if (options.algorithm == Exchange::Nccl) {
        nccl = mpi::NcclComm(comm.get());
      } else {
        // Auto goes on without nccl when NCCL cannot start here (every rank agrees).
        try {
          nccl = mpi::NcclComm(comm.get());
        } catch (const Error& e) {
          if (!e.collective())
            throw;
          nccl_usable = false;
          if (comm.rank() == 0)
            log::warn("transpose: nccl left out of the timed trial: {}", e.what());
        }
      }
    }
    prepared = true;
  }

  void run(Exchange a, const void* in, void* out, PhaseTimers* timers) {
    run_transpose(context(), a, in, out, timers);
  }

  // Each algorithm runs after a warm-up, timed; the slowest rank's time counts, so every rank
  // picks the same. Trials are repeated (up to three rounds or about a second, best of each) so
  // that noise does not decide. The output of the last run is a correct result like any other.
  void autotune(const void* in, void* out) {
    std::vector<Exchange> candidates = {Exchange::Alltoallv, Exchange::PairwiseP2P,
                                        Exchange::Pipelined};
    if (window)
      candidates.push_back(Exchange::SharedMemory);
    if (nccl)
      candidates.push_back(Exchange::Nccl);
    constexpr int kRounds = 3;
    constexpr double kEnough = 1.0; // seconds of trial after which no round is added
    const double start = wall_seconds();
    run(candidates[0], in, out, nullptr);
    // NCCL connects its peers on first use, which can take longer than many exchanges: that
    // belongs to the warm-up, not to the trial.
    if (nccl)
      run(Exchange::Nccl, in, out, nullptr);
    std::vector<double> seconds(candidates.size(), std::numeric_limits<double>::infinity());
    // Large matrices take seconds per round: the trial shows progress like any long phase.
    Progress progress("exchange trial", static_cast<double>(kRounds * candidates.size()));
    double runs = 0;
    for (int round = 0; round < kRounds; ++round) {
      std::vector<double> t(candidates.size());
      for (std::size_t k = 0; k < candidates.size(); ++k) {
        CHECK_MPI(MPI_Barrier(comm.get()));
        const double t0 = wall_seconds();
        run(candidates[k], in, out, nullptr);
        t[k] = wall_seconds() - t0;
        progress.update(++runs);
      }
      CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, t.data(), static_cast<int>(t.size()), MPI_DOUBLE,
                              MPI_MAX, comm.get()));
      double total = 0;
      for (std::size_t k = 0; k < t.size(); ++k) {
        seconds[k] = std::min(seconds[k], t[k]);
        total += t[k];
      }
      if (total > kEnough)
        break;
    }
    progress.finish();
    const auto best = std::min_element(seconds.begin(), seconds.end()) - seconds.begin();
    algorithm = candidates[static_cast<std::size_t>(best)];
    if (options.timers)
      options.timers->add("transpose.autotune", wall_seconds() - start);
    if (comm.rank() == 0) {
      std::string trial;
      for (std::size_t k = 0; k < candidates.size(); ++k)
        trial +=
            fmt::format("{}{} {:.3g} s", k ? ", " : "", exchange_name(candidates[k]), seconds[k]);
      log::info("transpose {} {} on {} ranks: exchange '{}' (trial: {})", layout.in.global().str(),
                dtype_name(dtype), comm.size(), exchange_name(algorithm), trial);
    }
  }
};

TransposePlan::TransposePlan(const BlockDistribution& in, DType dtype, MPI_Comm comm,
                             Backend backend, TransposeOptions options)
    : impl_(std::make_unique<Impl>(comm, dtype, options)) {
  auto& I = *impl_;
  mpi::collectively(I.comm.get(), [&] {
    TESSERA_REQUIRE(in.nranks() == I.comm.size(), InputError,
                    "transpose plan: the distribution is over {} ranks but the communicator has {}",
                    in.nranks(), I.comm.size());
  });
  I.backend = mpi::resolve_backend(backend, I.comm.get());
  I.layout = TransposeLayout(in, I.comm.rank());
  // Collective calls stay outside collectively(): a rank that failed earlier in a step would
  // never reach them.
  I.shared = I.comm.size() > 1 && mpi::on_one_node(I.comm.get());
  mpi::collectively(I.comm.get(), [&] {
    TESSERA_REQUIRE(I.shared || I.comm.size() == 1 || options.algorithm != Exchange::SharedMemory,
                    InputError,
                    "the shared-memory exchange needs every rank on one node; use alltoallv, "
                    "pairwise, pipelined or auto");
  });
  // The nccl exchange: the same checks give the same answer on every rank.
  if (options.algorithm == Exchange::Nccl)
    mpi::collectively(I.comm.get(), [&] {
      TESSERA_REQUIRE(
          I.backend == Backend::Cuda, InputError,
          "the nccl exchange moves device memory and needs the CUDA backend, but this "
          "transpose runs on the {} backend; use alltoallv, pairwise, pipelined or auto",
          backend_name(I.backend));
      TESSERA_REQUIRE(mpi::nccl_compiled(), NotCompiled, "the nccl exchange: {}",
                      mpi::nccl_unavailable(I.comm.get()));
    });
  if (I.backend == Backend::Cuda && I.comm.size() > 1 && mpi::nccl_compiled() &&
      (options.algorithm == Exchange::Nccl || options.algorithm == Exchange::Auto)) {
    const std::string why = mpi::nccl_unavailable(I.comm.get()); // collective
    I.nccl_usable = why.empty();
    if (options.algorithm == Exchange::Nccl)
      mpi::collectively(I.comm.get(), [&] {
        TESSERA_REQUIRE(why.empty(), InputError,
                        "the nccl exchange is not available: {}; use alltoallv, pairwise, "
                        "pipelined or auto",
                        why);
      });
    else if (!why.empty() && I.comm.rank() == 0)
      log::debug("transpose: nccl is not among the candidates: {}", why);
  }
  mpi::collectively(I.comm.get(), [&] {
    TransposeEngineConfig config{I.layout, dtype, options.memory, options.column_major};
    config.device_exchange = I.nccl_usable;
    config.host_exchange = options.algorithm != Exchange::Nccl;
    I.engine = make_transpose_engine(I.backend, config);
    I.exchange = mpi::MessageExchange(
        I.comm.get(), mpi::mpi_type(dtype), dtype_size(dtype), I.layout.send_counts,
        I.layout.send_offsets, I.layout.recv_counts, I.layout.recv_offsets, options.message_limit);
  });
  // Nothing to choose without peers.
  if (I.comm.size() == 1 && options.algorithm == Exchange::Auto)
    I.algorithm = Exchange::Alltoallv;
  else
    I.algorithm = options.algorithm;
}

TransposePlan::~TransposePlan() = default;
TransposePlan::TransposePlan(TransposePlan&&) noexcept = default;
TransposePlan& TransposePlan::operator=(TransposePlan&&) noexcept = default;

void* TransposePlan::input_buffer() {
  auto& I = *impl_;
  if (!I.inputs) {
    if (!(I.shared || I.comm.size() == 1) || !I.engine->reads_shared_input())
      return nullptr;
    I.inputs = mpi::SharedWindow(I.comm.get(),
                                 static_cast<std::size_t>(I.layout.my_rows() * I.layout.N()) *
                                     dtype_size(I.dtype));
  }
  return I.inputs.local();
}

void TransposePlan::execute(const void* in, void* out) {
  execute_as(impl_->dtype, in, out);
}

void TransposePlan::execute_as(DType t, const void* in, void* out) {
  auto& I = *impl_;
  // Agreed before any collective step: a rank whose arguments are wrong would never enter it.
  mpi::collectively(I.comm.get(), [&] {
    TESSERA_REQUIRE(t == I.dtype, InputError,
                    "transpose plan was built for {} data but execute() got {}",
                    dtype_name(I.dtype), dtype_name(t));
    TESSERA_REQUIRE((in != nullptr || I.layout.my_rows() * I.layout.N() == 0) &&
                        (out != nullptr || I.layout.my_cols() * I.layout.M() == 0),
                    InputError, "transpose plan: execute() got a null {} block",
                    in == nullptr ? "input" : "output");
  });
  if (I.inputs) {
    // Direct only when every rank's input is in the shared window.
    int all = in == I.inputs.local() ? 1 : 0;
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, I.comm.get()));
    if (all) {
      if (I.algorithm == Exchange::Auto)
        I.algorithm = Exchange::SharedMemory;
      run_transpose_direct(I.context(), I.inputs, in, out, I.options.timers);
      return;
    }
  }
  I.prepare();
  if (I.algorithm == Exchange::Auto) {
    I.autotune(in, out);
    return;
  }
  I.run(I.algorithm, in, out, I.options.timers);
}

const BlockDistribution& TransposePlan::input_distribution() const noexcept {
  return impl_->layout.in;
}
const BlockDistribution& TransposePlan::output_distribution() const noexcept {
  return impl_->layout.out;
}
DType TransposePlan::dtype() const noexcept {
  return impl_->dtype;
}
Backend TransposePlan::backend() const noexcept {
  return impl_->backend;
}
Exchange TransposePlan::algorithm() const noexcept {
  return impl_->algorithm;
}

double TransposePlan::bytes_moved() const noexcept {
  const auto& L = impl_->layout;
  return static_cast<double>(L.my_rows() * L.N() + L.my_cols() * L.M()) *
         static_cast<double>(dtype_size(impl_->dtype));
}

} // namespace tessera

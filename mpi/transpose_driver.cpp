#include "mpi/transpose_driver.hpp"

#include <numeric>
#include <vector>

#include "core/check.hpp"
#include "core/throw.hpp"

namespace tessera {

namespace {

double sum(const std::vector<std::int64_t>& v) {
  return static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0}));
}

// Accumulates the time of the steps of one execute, then hands them to PhaseTimers once, so
// that a pipelined execute counts one call per phase, not one per peer.
struct StepClock {
  template <class F>
  void time(double& slot, F&& f) {
    const double t0 = wall_seconds();
    f();
    slot += wall_seconds() - t0;
  }
  double pack = 0, self = 0, unpack = 0;
};

const char* offset(const void* base, std::int64_t elements, std::size_t size) {
  return static_cast<const char*>(base) + static_cast<std::size_t>(elements) * size;
}

// Where each remote piece lies once it has arrived: in the receive buffer, or in its sender's
// segment of the shared-memory window.
std::vector<const void*> pieces(const TransposeRun& run, const void* recv, bool shared) {
  const auto& L = run.layout;
  std::vector<const void*> p(static_cast<std::size_t>(L.nranks()), nullptr);
  for (int q = 0; q < L.nranks(); ++q) {
    if (q == L.rank)
      continue;
    p[q] = shared ? offset(run.window->peer(q), L.send_offset_of(q, L.rank), run.element_size)
                  : offset(recv, L.recv_offsets[q], run.element_size);
  }
  return p;
}

} // namespace

void run_transpose(const TransposeRun& run, Exchange algorithm, const void* in, void* out,
                   PhaseTimers* timers) {
  auto& engine = run.engine;
  const auto& L = run.layout;
  StepClock clock;
  const double start = wall_seconds();
  engine.begin(in, out);
  const bool alone = L.nranks() == 1;

  if (alone) {
    clock.time(clock.self, [&] { engine.transpose_self(); });
  } else if (algorithm == Exchange::SharedMemory) {
    TESSERA_REQUIRE(run.window != nullptr, InternalError,
                    "run_transpose: the shared-memory exchange needs a window");
    clock.time(clock.pack, [&] { engine.pack_all(); });
    clock.time(clock.self, [&] { engine.transpose_self(); });
    // Every piece is packed before anyone reads it ...
    run.window->sync();
    CHECK_MPI(MPI_Barrier(run.comm));
    run.window->sync();
    const auto from = pieces(run, nullptr, true);
    clock.time(clock.unpack, [&] { engine.unpack_all(from.data()); });
    // ... and read before the next execute packs over it.
    CHECK_MPI(MPI_Barrier(run.comm));
  } else if (algorithm == Exchange::Nccl) {
    TESSERA_REQUIRE(run.nccl != nullptr && engine.exchanges_on_device(), InternalError,
                    "run_transpose: the nccl exchange needs an NCCL communicator and a GPU engine");
    // Phase edges are synchronised only when someone reads the times.
    const auto edge = [&] {
      if (timers)
        engine.synchronize();
    };
    clock.time(clock.pack, [&] {
      engine.pack_device();
      edge();
    });
    // The transfers run on the GPU while the self piece is transposed; the exchange's phase is
    // the time left waiting for them after that.
    const void* recv = engine.exchange_device(*run.nccl);
    clock.time(clock.self, [&] {
      engine.transpose_self();
      if (timers)
        engine.synchronize_local();
    });
    edge();
    const auto from = pieces(run, recv, false);
    clock.time(clock.unpack, [&] {
      engine.unpack_all(from.data());
      edge();
    });
  } else if (algorithm == Exchange::Pipelined) {
    void* recv = engine.recv_buffer();
    const auto from = pieces(run, recv, false);
    run.exchange.pipelined(
        engine.send_buffer(), recv,
        [&](int peer) { clock.time(clock.pack, [&] { engine.pack(peer); }); },
        [&] { clock.time(clock.self, [&] { engine.transpose_self(); }); },
        [&](int peer) { clock.time(clock.unpack, [&] { engine.unpack(peer, from[peer]); }); });
  } else {
    void* recv = engine.recv_buffer();
    clock.time(clock.pack, [&] { engine.pack_all(); });
    if (algorithm == Exchange::Alltoallv)
      run.exchange.alltoallv(engine.send_buffer(), recv);
    else if (algorithm == Exchange::PairwiseP2P)
      run.exchange.pairwise(engine.send_buffer(), recv);
    else
      TESSERA_THROW(InternalError, "run_transpose: unresolved exchange algorithm '{}'",
                    exchange_name(algorithm));
    clock.time(clock.self, [&] { engine.transpose_self(); });
    const auto from = pieces(run, recv, false);
    clock.time(clock.unpack, [&] { engine.unpack_all(from.data()); });
  }
  engine.end();
  const double total = wall_seconds() - start;

  if (!timers)
    return;
  const double es = static_cast<double>(run.element_size);
  const double self_bytes = 2.0 * es * static_cast<double>(L.my_rows() * L.my_cols());
  timers->add("transpose.self", clock.self, self_bytes);
  if (alone)
    return;
  const double sent = sum(L.send_counts) * es, received = sum(L.recv_counts) * es;
  timers->add("transpose.pack", clock.pack, 2.0 * sent);
  timers->add("transpose.exchange", std::max(0.0, total - clock.pack - clock.self - clock.unpack),
              sent + received);
  timers->add("transpose.unpack", clock.unpack, 2.0 * received);
}

void run_transpose_direct(const TransposeRun& run, const mpi::SharedWindow& inputs, const void* in,
                          void* out, PhaseTimers* timers) {
  auto& engine = run.engine;
  const auto& L = run.layout;
  StepClock clock;
  double peers = 0;
  const double start = wall_seconds();
  engine.begin(in, out);
  // Every rank has written its input before anyone reads it ...
  inputs.sync();
  CHECK_MPI(MPI_Barrier(run.comm));
  inputs.sync();
  clock.time(clock.self, [&] { engine.transpose_self(); });
  // Starting at different peers spreads the reads over the ranks' memory.
  for (int k = 1; k < L.nranks(); ++k) {
    const int q = (L.rank + k) % L.nranks();
    if (L.in.rows(q) > 0 && L.my_cols() > 0)
      clock.time(peers, [&] { engine.transpose_from(q, inputs.peer(q)); });
  }
  engine.end();
  // ... and nobody changes its input before everyone has read it.
  CHECK_MPI(MPI_Barrier(run.comm));
  const double total = wall_seconds() - start;
  if (!timers)
    return;
  const double es = static_cast<double>(run.element_size);
  timers->add("transpose.self", clock.self,
              2.0 * es * static_cast<double>(L.my_rows() * L.my_cols()));
  timers->add("transpose.peers", peers, 2.0 * es * sum(L.recv_counts));
  timers->add("transpose.exchange", std::max(0.0, total - clock.self - peers));
}

} // namespace tessera

#include "mpi/transpose_driver.hpp"

#include <numeric>

#include "core/throw.hpp"

namespace tessera {

namespace {

double sum(const std::vector<std::int64_t>& v) {
  return static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0}));
}

// Accumulates the time of the steps of one execute, then hands them to PhaseTimers once, so
// that a pipelined execute counts one call per phase, not one per peer.
class StepClock {
public:
  template <class F>
  void time(double& slot, F&& f) {
    const double t0 = wall_seconds();
    f();
    slot += wall_seconds() - t0;
  }
  double pack = 0, self = 0, unpack = 0;
};

} // namespace

void run_transpose(TransposeEngine& engine, mpi::MessageExchange& exchange,
                   const TransposeLayout& layout, std::size_t element_size, Exchange algorithm,
                   const void* in, void* out, PhaseTimers* timers) {
  StepClock clock;
  const double start = wall_seconds();
  engine.begin(in, out);
  void* send = engine.send_buffer();
  void* recv = engine.recv_buffer();
  const bool alone = layout.nranks() == 1;

  if (alone) {
    clock.time(clock.self, [&] { engine.transpose_self(); });
  } else if (algorithm == Exchange::Pipelined) {
    exchange.pipelined(
        send, recv, [&](int peer) { clock.time(clock.pack, [&] { engine.pack(peer); }); },
        [&] { clock.time(clock.self, [&] { engine.transpose_self(); }); },
        [&](int peer) { clock.time(clock.unpack, [&] { engine.unpack(peer); }); });
  } else {
    clock.time(clock.pack, [&] { engine.pack_all(); });
    if (algorithm == Exchange::Alltoallv) {
      exchange.alltoallv(send, recv);
      clock.time(clock.self, [&] { engine.transpose_self(); });
    } else if (algorithm == Exchange::PairwiseP2P) {
      exchange.pairwise(send, recv);
      clock.time(clock.self, [&] { engine.transpose_self(); });
    } else {
      TESSERA_THROW(InternalError, "run_transpose: unresolved exchange algorithm '{}'",
                    exchange_name(algorithm));
    }
    clock.time(clock.unpack, [&] { engine.unpack_all(); });
  }
  engine.end();
  const double total = wall_seconds() - start;

  if (!timers)
    return;
  const double es = static_cast<double>(element_size);
  const double self_bytes = 2.0 * es * static_cast<double>(layout.my_rows() * layout.my_cols());
  timers->add("transpose.self", clock.self, self_bytes);
  if (alone)
    return;
  const double sent = sum(layout.send_counts) * es, received = sum(layout.recv_counts) * es;
  timers->add("transpose.pack", clock.pack, 2.0 * sent);
  timers->add("transpose.exchange", std::max(0.0, total - clock.pack - clock.self - clock.unpack),
              sent + received);
  timers->add("transpose.unpack", clock.unpack, 2.0 * received);
}

} // namespace tessera

#include "ops/out_of_core_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/format_bytes.hpp"
#include "core/log.hpp"
#include "core/memory_room.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"

namespace tessera::ops {

double in_memory_bytes(const WorkingSet& w, int nranks) {
  const BlockDistribution d(w.shape, nranks);
  const double elements =
      double(d.rows(0)) * double(w.shape.cols) +
      (w.with_transpose ? double(d.transposed().rows(0)) * double(w.shape.rows) : 0.0);
  return elements * double(dtype_size(w.dtype));
}

bool stream_out_of_core(const StagingChoice& choice, const WorkingSet& w, int nranks,
                        bool from_file, const std::string& name) {
  const double need = in_memory_bytes(w, nranks);
  const double limit = choice.memory_limit > 0 ? double(choice.memory_limit)
                                               : std::numeric_limits<double>::infinity();
  const bool over_limit = need > limit;
  // The room decides only where it is tighter than an explicit limit.
  const bool over_room = !over_limit && need > choice.room;
  const bool too_big = over_limit || over_room;
  const std::string bound =
      over_limit ? fmt::format("more than {} {}", choice.limit_name, format_bytes(limit))
                 : fmt::format("more than the {} this process may use ({})",
                               format_bytes(choice.room), choice.room_source);
  if (!from_file && (too_big || choice.forced))
    TESSERA_THROW(ResourceError,
                  "the generated {} {} matrix needs {} per rank{}; only a matrix read from a "
                  "file streams out of core: write it with `tessera generate` and set "
                  "matrix.input{}",
                  w.shape.str(), dtype_name(w.dtype), format_bytes(need),
                  too_big ? ", " + bound : std::string(),
                  over_room ? fmt::format(", or run on more ranks ({} sets the memory a rank may "
                                          "use)",
                                          choice.limit_name)
                            : std::string());
  if (too_big && !choice.forced)
    log::info("{} ({} {}) needs {} per rank in memory, {}: streaming it out of core{}", name,
              w.shape.str(), dtype_name(w.dtype), format_bytes(need), bound,
              over_room ? fmt::format(" ({} sets the memory a rank may use)", choice.limit_name)
                        : std::string());
  return too_big || choice.forced;
}

std::pair<double, std::string> room_per_rank(MPI_Comm comm) {
  const MemoryRoom r = memory_room();
  const int local = std::max(1, mpi::Communicator(comm).node_local_size());
  const double share = r.node_bytes / double(local);
  const double mine = std::max(0.0, std::min(share, r.process_bytes));
  const std::string source =
      share > r.process_bytes ? std::string("RLIMIT_AS, less the address space already in use")
      : local > 1 ? fmt::format("its share of {}, shared by {} ranks", r.node_source, local)
                  : r.node_source;
  // Every rank decides the same: the tightest rank's room, and what bounds it.
  const int nranks = mpi::comm_size(comm);
  const std::vector<double> rooms =
      mpi::allgatherv(comm, std::vector<double>{mine}, std::vector<int>(std::size_t(nranks), 1));
  const std::vector<std::string> sources = mpi::allgather(comm, source);
  const auto least =
      static_cast<std::size_t>(std::min_element(rooms.begin(), rooms.end()) - rooms.begin());
  return {rooms[least], sources[least]};
}

bool stream_out_of_core(const StagingChoice& choice, const MatrixInput& input, bool with_transpose,
                        MPI_Comm comm) {
  StagingChoice c = choice;
  std::tie(c.room, c.room_source) = room_per_rank(comm);
  bool streamed = false;
  mpi::collectively(comm, [&] {
    streamed = stream_out_of_core(c, {input.info.shape, input.info.dtype, with_transpose},
                                  mpi::comm_size(comm), input.from_file(), input.name());
  });
  return streamed;
}

} // namespace tessera::ops

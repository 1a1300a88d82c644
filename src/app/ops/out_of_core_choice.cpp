#include "ops/out_of_core_choice.hpp"

#include <fmt/format.h>

#include "core/block_distribution.hpp"
#include "core/format_bytes.hpp"
#include "core/log.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

namespace tessera::app {

double in_memory_bytes(const WorkingSet& w, int nranks) {
  const BlockDistribution d(w.shape, nranks);
  const double elements =
      double(d.rows(0)) * double(w.shape.cols) +
      (w.with_transpose ? double(d.transposed().rows(0)) * double(w.shape.rows) : 0.0);
  return elements * double(dtype_size(w.dtype));
}

bool stream_out_of_core(const StagingChoice& choice, const WorkingSet& w, int nranks,
                        bool from_file, const std::string& name) {
  if (!choice.may_stream())
    return false;
  const double need = in_memory_bytes(w, nranks);
  const bool too_big = choice.memory_limit > 0 && need > double(choice.memory_limit);
  if (!from_file && (too_big || choice.forced))
    TESSERA_THROW(ResourceError,
                  "the generated {} {} matrix needs {} per rank{}; only a matrix read from a "
                  "file streams out of core: write it with `tessera generate` and set "
                  "matrix.input",
                  w.shape.str(), dtype_name(w.dtype), format_bytes(need),
                  too_big ? fmt::format(", more than {} {}", choice.limit_name,
                                        format_bytes(double(choice.memory_limit)))
                          : std::string());
  if (too_big && !choice.forced)
    log::info("{} ({} {}) needs {} per rank in memory, more than {} {}: streaming it out of core",
              name, w.shape.str(), dtype_name(w.dtype), format_bytes(need), choice.limit_name,
              format_bytes(double(choice.memory_limit)));
  return too_big || choice.forced;
}

bool stream_out_of_core(const StagingChoice& choice, const MatrixInput& input, bool with_transpose,
                        MPI_Comm comm) {
  bool streamed = false;
  mpi::collectively(comm, [&] {
    streamed = stream_out_of_core(choice, {input.info.shape, input.info.dtype, with_transpose},
                                  mpi::comm_size(comm), input.from_file(), input.name());
  });
  return streamed;
}

} // namespace tessera::app

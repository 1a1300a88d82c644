// The CUDA engine of the distributed reductions (see mpi/reduce_engine.hpp for the contract).
// Not written yet: the factory reports that the backend is unavailable.
#include "core/throw.hpp"
#include "mpi/reduce_engine.hpp"

namespace tessera {

std::unique_ptr<ReduceEngine> make_cuda_reduce_engine(const ReduceEngineConfig&) {
  TESSERA_THROW(NotCompiled, "the CUDA backend is not available yet for distributed reductions");
}

} // namespace tessera

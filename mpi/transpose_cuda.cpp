// The CUDA engine of the distributed transpose (see mpi/transpose_engine.hpp for the contract).
// Not written yet: the factory reports that the backend is unavailable.
#include "core/throw.hpp"
#include "mpi/transpose_engine.hpp"

namespace tessera {

std::unique_ptr<TransposeEngine> make_cuda_transpose_engine(const TransposeEngineConfig&) {
  TESSERA_THROW(NotCompiled, "the CUDA backend is not available yet for the distributed transpose");
}

} // namespace tessera

// The errors of core/backend_fn.hpp's stubs.
#include "core/backend_fn.hpp"

#include "core/throw.hpp"

namespace tessera::detail {

void cuda_not_compiled(const char* function) {
  TESSERA_THROW(NotCompiled,
                "cuda::{} needs the CUDA backend, which this build of tessera lacks (configure "
                "with TESSERA_ENABLE_CUDA=ON where nvcc and the CUDA toolkit are installed)",
                function);
}

void nccl_not_compiled(const char* function) {
  TESSERA_THROW(NotCompiled,
                "{} needs NCCL, which this build of tessera lacks (configure with "
                "TESSERA_ENABLE_NCCL=ON where nccl.h and libnccl are installed)",
                function);
}

} // namespace tessera::detail

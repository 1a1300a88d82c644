#include "mpi/reduce_engine.hpp"

#include "core/throw.hpp"

namespace tessera {

std::unique_ptr<ReduceEngine> make_reduce_engine(Backend backend,
                                                 const ReduceEngineConfig& config) {
  switch (backend) {
  case Backend::Cpu:
    TESSERA_REQUIRE(config.memory == Memory::Host, InputError,
                    "the CPU backend reduces host memory; device pointers need the CUDA backend");
    return make_cpu_reduce_engine(config);
  case Backend::Cuda:
    return make_cuda_reduce_engine(config);
  case Backend::Auto:
    break;
  }
  TESSERA_THROW(InternalError, "make_reduce_engine: the backend must be resolved first");
}

} // namespace tessera

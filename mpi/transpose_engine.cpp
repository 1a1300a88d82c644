#include "mpi/transpose_engine.hpp"

#include "core/throw.hpp"

namespace tessera {

void TransposeEngine::transpose_from(int, const void*) {
  TESSERA_THROW(InternalError, "this transpose engine cannot read other ranks' input");
}

void TransposeEngine::pack_device() {
  TESSERA_THROW(InternalError, "this transpose engine has no on-device exchange");
}

const void* TransposeEngine::exchange_device(mpi::NcclComm&) {
  TESSERA_THROW(InternalError, "this transpose engine has no on-device exchange");
}

std::unique_ptr<TransposeEngine> make_transpose_engine(Backend backend,
                                                       const TransposeEngineConfig& config) {
  switch (backend) {
  case Backend::Cpu:
    TESSERA_REQUIRE(
        config.memory == Memory::Host, InputError,
        "the CPU backend transposes host memory; device pointers need the CUDA backend");
    return make_cpu_transpose_engine(config);
  case Backend::Cuda:
    return make_cuda_transpose_engine(config);
  case Backend::Auto:
    break;
  }
  TESSERA_THROW(InternalError, "make_transpose_engine: the backend must be resolved first");
}

} // namespace tessera

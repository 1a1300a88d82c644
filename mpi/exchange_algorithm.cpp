#include "mpi/exchange_algorithm.hpp"

#include "core/throw.hpp"

namespace tessera {

std::string_view exchange_name(Exchange e) noexcept {
  switch (e) {
  case Exchange::Auto:
    return "auto";
  case Exchange::Alltoallv:
    return "alltoallv";
  case Exchange::PairwiseP2P:
    return "pairwise";
  case Exchange::Pipelined:
    return "pipelined";
  case Exchange::SharedMemory:
    return "shared";
  case Exchange::Nccl:
    return "nccl";
  }
  return "?";
}

Exchange parse_exchange(std::string_view s) {
  for (Exchange e : {Exchange::Auto, Exchange::Alltoallv, Exchange::PairwiseP2P,
                     Exchange::Pipelined, Exchange::SharedMemory, Exchange::Nccl})
    if (exchange_name(e) == s)
      return e;
  if (s == "p2p")
    return Exchange::PairwiseP2P;
  TESSERA_THROW(InputError,
                "unknown exchange algorithm '{}' (expected auto, alltoallv, pairwise, pipelined, "
                "shared or nccl)",
                s);
}

} // namespace tessera

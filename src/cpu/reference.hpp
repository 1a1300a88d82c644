// Plain serial statements of every kernel: the oracle the tests compare each backend with.
// Deliberately simple loops, no blocking, no threads.
#pragma once

#include <cstdint>
#include <vector>

#include "core/reduction.hpp"

namespace tessera::reference {

template <class T>
void transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols);

// The finalized result of op over the whole rows×cols matrix along `axis`, in the canonical
// order of core/reduction.hpp: size 1 (All), rows (Rows) or cols (Cols).
template <class T>
std::vector<double> reduce(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols);

} // namespace tessera::reference

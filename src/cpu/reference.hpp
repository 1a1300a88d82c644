// Plain serial statements of every kernel: the oracle the tests compare each backend with.
// Deliberately simple loops, no blocking, no threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/reduction.hpp"

namespace tessera::reference {

template <class T>
void transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols);

// out[i_0, …, i_{r-1}] = in[j] where j[axes[k]] = i_k, both row-major, one element at a time;
// out has shape[axes[k]] along dimension k.
void permute(const void* in, void* out, std::size_t element_size,
             std::span<const std::int64_t> shape, std::span<const int> axes);

// The finalized result of op over the whole rows×cols matrix along `axis`, in the canonical
// order of core/reduction.hpp: size 1 (All), rows (Rows) or cols (Cols).
template <class T>
std::vector<double> reduce(Op op, Axis axis, const T* a, std::int64_t rows, std::int64_t cols);

} // namespace tessera::reference

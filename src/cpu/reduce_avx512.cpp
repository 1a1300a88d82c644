// The reduction kernels (cpu/reduce_kernels.inl) compiled for AVX-512F whatever the build flags;
// cpu/reduce.cpp runs them only on processors that have it. Full-width vectors: GCC defaults to
// 256-bit ones on AVX-512 processors, which held three f32 ops (sum, max, norm2) to 0.77 of a
// read against 0.88 with 512-bit ones.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu/reduce.hpp"
#include "cpu/reduce_kernels.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC target("avx512f,prefer-vector-width=512")
#elif defined(__x86_64__) && defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif

#define TESSERA_REDUCE_KERNELS kReduceAvx512
#include "cpu/reduce_kernels.inl"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#elif defined(__x86_64__) && defined(__clang__)
#pragma clang attribute pop
#endif

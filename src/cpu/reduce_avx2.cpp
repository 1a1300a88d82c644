// The reduction kernels (cpu/reduce_kernels.inl) compiled for AVX2 whatever the build flags;
// cpu/reduce.cpp runs them only on processors that have it.
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
#pragma GCC target("avx2")
#elif defined(__x86_64__) && defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#endif

#define TESSERA_REDUCE_KERNELS kReduceAvx2
#include "cpu/reduce_kernels.inl"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#elif defined(__x86_64__) && defined(__clang__)
#pragma clang attribute pop
#endif

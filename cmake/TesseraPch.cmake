# Build-time helpers: precompiled headers, unity batches and the linker.
#
# Every translation unit of tessera parses the same ~100k lines of the standard library, fmt,
# spdlog, MPI and HDF5 before its own code; on a small machine that is most of the build.
# TESSERA_PCH precompiles them once per target (tests share one precompiled header);
# TESSERA_UNITY compiles each library in batches of sources (CI presets turn it on; for
# day-to-day work it is off, so an edit recompiles one file).
option(TESSERA_PCH "Precompile the headers every source includes" ON)
option(TESSERA_UNITY "Compile the libraries in unity batches" OFF)
set(TESSERA_UNITY_BATCH 8 CACHE STRING "Sources per unity batch")

set(_std_headers
    <algorithm> <array> <atomic> <chrono> <cmath> <complex> <cstddef> <cstdint> <cstdio>
    <cstdlib> <cstring> <exception> <functional> <limits> <memory> <mutex> <optional>
    <stdexcept> <string> <string_view> <utility> <vector>)
set(TESSERA_PCH_HEADERS ${_std_headers} <mpi.h> <fmt/format.h> <spdlog/spdlog.h>)
# src/core and cuda/ do not see MPI.
set(TESSERA_PCH_HEADERS_NO_MPI ${_std_headers} <fmt/format.h> <spdlog/spdlog.h>)

# GCC 12 reports std::string's own inlined copies as out of bounds (GCC bugs 105329, 105651)
# when the standard headers come from a precompiled header, where it otherwise stays quiet;
# GCC 13 does the same for fmt 9's bigint copies (format_dragon).
function(tessera_pch_warnings target)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 14)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread -Wno-restrict>)
  endif()
endfunction()

# Sources whose file-local names (anonymous namespaces) repeat another source's of the same
# library, or that GCC would warn about as included files: they compile on their own even in
# unity builds.
set(TESSERA_UNITY_SKIP
    src/app/ops/out_of_core_transpose.cpp src/app/io/h5_file.cpp src/app/solver/fields.cpp mpi/reduce_plan.cpp
    src/app/cli/bench/bench_cuda.cpp
    # Compiled for one instruction set each (a target pragma over the whole file), or holding
    # one such build of the reduction kernels (file-local copies of the same names).
    src/cpu/transpose_avx2.cpp src/cpu/transpose_avx512.cpp src/cpu/reduce.cpp
    src/cpu/reduce_avx2.cpp src/cpu/reduce_avx512.cpp)

# TESSERA_LINKER: the linker the compiler driver runs for tessera's executables (-fuse-ld=NAME:
# gold, lld, mold); empty keeps the compiler's default (GNU ld). The CI presets take gold, which
# comes with binutils: each build links about a hundred test executables, gold in about half of
# ld's time. Shared libraries keep the default linker: gold exports the function-local statics
# of templates (GNU unique symbols) that libtessera.so's version script hides.
set(TESSERA_LINKER "" CACHE STRING
    "Linker for tessera's executables (gold, lld, mold; empty: the compiler's default)")
if(TESSERA_LINKER)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=${TESSERA_LINKER}" TESSERA_LINKER_WORKS_${TESSERA_LINKER})
  if(TESSERA_LINKER_WORKS_${TESSERA_LINKER})
    set(_exe "$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>")
    add_link_options("$<$<AND:$<LINK_LANGUAGE:C,CXX>,${_exe}>:-fuse-ld=${TESSERA_LINKER}>")
  else()
    message(WARNING "TESSERA_LINKER=${TESSERA_LINKER}: the compiler cannot link with it; "
                    "the default linker is used")
  endif()
endif()

# The libraries that keep the sanitizer preset's -O1 (the kernels the tests spend their time in).
set(TESSERA_ASAN_KEEP_OPTIMISED tessera_core)

# tessera_build_speed(TARGET [NO_MPI]): applies both to one library or executable; NO_MPI for
# targets that do not link MPI (src/core, cuda/).

function(tessera_build_speed target)
  cmake_parse_arguments(ARG "NO_MPI" "" "" ${ARGN})
  # The AddressSanitizer build compiles the layers above the kernels at -O0 (a third less time
  # than the preset's -O1; their tests spend their time in the kernels, which keep -O1).
  if(TESSERA_SANITIZE STREQUAL "address" AND NOT target IN_LIST TESSERA_ASAN_KEEP_OPTIMISED)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
  endif()
  if(TESSERA_PCH)
    if(ARG_NO_MPI)
      target_precompile_headers(${target} PRIVATE ${TESSERA_PCH_HEADERS_NO_MPI})
    else()
      target_precompile_headers(${target} PRIVATE ${TESSERA_PCH_HEADERS})
    endif()
    tessera_pch_warnings(${target})
  endif()
  if(TESSERA_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${TESSERA_UNITY_BATCH})
    foreach(src IN LISTS TESSERA_UNITY_SKIP)
      set_source_files_properties(${PROJECT_SOURCE_DIR}/${src} TARGET_DIRECTORY ${target}
                                  PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endforeach()
  endif()
endfunction()

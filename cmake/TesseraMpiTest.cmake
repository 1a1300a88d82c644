# tessera_add_mpi_test(NAME SOURCES s… RANKS 1 2 3 4 LABELS mpi;io [TIMEOUT s] [BASE lib])
# Builds one GoogleTest binary with the shared MPI test main and registers it once per rank
# count as NAME.npN. Settings that let OpenMPI run as root and oversubscribe are set here so
# ctest works the same for users, CI and containers.
# BASE: the tessera library it links (default tessera_all, everything).
# odls_base_sigkill_timeout=0: when a rank exits with an error, mpiexec ends the job at once;
# by default it lingers about two seconds first, which the many tests of bad input (each a
# failing job) would add up to minutes.
# pml=ob1 and btl=self,vader,tcp: the tests run on one host, over shared memory; without them
# every rank first probes the high-speed network libraries OpenMPI was built with (PSM, PSM2,
# OFI), which took 0.25 s of each launch on a machine without such hardware (Debian 12).
set(TESSERA_MPI_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
    OMPI_MCA_odls_base_sigkill_timeout=0 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
    OMP_NUM_THREADS=1 HDF5_USE_FILE_LOCKING=FALSE)

# GoogleTest as the test binaries link it: tessera_gtest (the framework), tessera_gtest_main (with
# its main). Debian's libgtest.a was compiled against a standard library that instantiates
# std::string once, in libstdc++.so; in C++20 every tessera object carries its own weak copies
# of std::string's members, so gtest's references to them were answered by the first tessera
# archive after it (libtessera_app.a), pulling that object in and, through it, nearly all of
# tessera into every test binary (an AddressSanitizer test binary of 140 MB, most of each link's
# time). With libstdc++ right after gtest, a test links only the tessera objects it uses.
add_library(tessera_gtest INTERFACE)
add_library(tessera_gtest_main INTERFACE)
set(_stdlib_after_gtest)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(_stdlib_after_gtest stdc++)
endif()
target_link_libraries(tessera_gtest INTERFACE GTest::gtest ${_stdlib_after_gtest})
target_link_libraries(tessera_gtest_main INTERFACE GTest::gtest_main GTest::gtest
                                                   ${_stdlib_after_gtest})

# Options of every test binary's own code. In the AddressSanitizer build the tests compile at
# -O0 (tessera's libraries keep the preset's -O1): test code is mostly GoogleTest macros and
# small reference loops, and at -O1 under ASan it took half of that build's time.
# The tests listed below keep -O1: their serial reference loops ran slower at -O0 than their
# compile gained (they then cannot share the -O0 precompiled header either).
add_library(tessera_test_options INTERFACE)
if(TESSERA_SANITIZE STREQUAL "address")
  target_compile_options(tessera_test_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
endif()
set(TESSERA_TESTS_KEEP_OPTIMISED test_cpu_transpose test_cpu_reduce test_out_of_core_reduce)

# tessera_test_setup(TARGET): the test options and the shared precompiled header.
function(tessera_test_setup target)
  if(TESSERA_SANITIZE STREQUAL "address" AND target IN_LIST TESSERA_TESTS_KEEP_OPTIMISED)
    return()
  endif()
  target_link_libraries(${target} PRIVATE tessera_test_options)
  tessera_test_pch(${target})
endfunction()

# The MPI test main is compiled once, and carries the precompiled header every test reuses.
function(tessera_test_main)
  add_library(tessera_mpi_test_main OBJECT ${PROJECT_SOURCE_DIR}/tests/mpi_main.cpp)
  # The lowest library with MPI, so that the threading tests' build (below) stops there.
  target_link_libraries(tessera_mpi_test_main PUBLIC tessera_ops GTest::gtest tessera_warnings
                                                     tessera_sanitizers tessera_test_options)
  if(TESSERA_PCH)
    target_precompile_headers(tessera_mpi_test_main PRIVATE ${TESSERA_PCH_HEADERS}
                              <gtest/gtest.h>)
    tessera_pch_warnings(tessera_mpi_test_main)
  endif()
endfunction()

# tessera_test_pch(TARGET): a test binary reuses the tests' precompiled header.
function(tessera_test_pch target)
  if(TESSERA_PCH)
    target_precompile_headers(${target} REUSE_FROM tessera_mpi_test_main)
    tessera_pch_warnings(${target})
  endif()
endfunction()

function(tessera_add_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;BASE" "SOURCES;RANKS;LABELS;LINKS" ${ARGN})
  if(NOT ARG_BASE)
    set(ARG_BASE tessera_all)
  endif()
  if(NOT ARG_RANKS)
    set(ARG_RANKS 1 2 3 4)
  endif()
  if(NOT ARG_TIMEOUT)
    # Generous: sanitizer builds run 3-4 oversubscribed ranks on two cores.
    set(ARG_TIMEOUT 300)
  endif()
  if(NOT TARGET tessera_mpi_test_main)
    tessera_test_main()
  endif()
  add_executable(${name} ${ARG_SOURCES} $<TARGET_OBJECTS:tessera_mpi_test_main>)
  target_link_libraries(${name} PRIVATE ${ARG_BASE} tessera_gtest tessera_warnings tessera_sanitizers
                                        ${ARG_LINKS})
  tessera_test_setup(${name})
  foreach(np IN LISTS ARG_RANKS)
    add_test(NAME ${name}.np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${np} PROPERTIES
      LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${np}
      ENVIRONMENT "${TESSERA_MPI_TEST_ENV}")
  endforeach()
endfunction()

# examples.installed: installs this build into a temporary prefix, builds examples/ there as a
# separate project (find_package(tessera) against the prefix, not the build tree), and runs
# every example at 3 ranks, then the Python tests under mpirun (tests/examples/run.sh).
if(TESSERA_SANITIZE)
  return() # the sanitizer builds have no bindings, and their libraries need the runtime first
endif()
# library.exports: libtessera.so exports the public API and nothing else
# (tests/examples/exports.sh).
add_test(NAME library.exports
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/examples/exports.sh $<TARGET_FILE:tessera_shared>
                 ${PROJECT_SOURCE_DIR}/include/tessera)
set_tests_properties(library.exports PROPERTIES LABELS "library" TIMEOUT 60)

set(_mpirun ${MPIEXEC_EXECUTABLE})
if(NOT _mpirun)
  set(_mpirun mpirun)
endif()
set(_python none)
if(TESSERA_HAVE_PYTHON)
  set(_python ${TESSERA_PYTHON_EXECUTABLE})
endif()
add_test(NAME examples.installed
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/examples/run.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} ${_mpirun} ${CMAKE_GENERATOR} ${_python}
                 ${TESSERA_PYTHON_INSTALL_DIR})
set_tests_properties(examples.installed PROPERTIES LABELS "examples;mpi" TIMEOUT 600
                     PROCESSORS 2 ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;\
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMP_NUM_THREADS=1;\
HDF5_USE_FILE_LOCKING=FALSE")

# python.permute.npN: the Python module's permutations of dimensions against numpy.transpose;
# python.redistribute.npN: its layouts and redistributions against numpy on the gathered
# matrices; python.reduce_layout.npN: reductions over layouts against those over row blocks;
# python.hdf5_layout.npN: HDF5 datasets read into and written from layouts, against
# h5py. From the build tree, at several rank counts (each job also runs on its
# sub-communicators).
if(TESSERA_HAVE_PYTHON)
  foreach(suite permute redistribute reduce_layout hdf5_layout)
    foreach(np 1 2 4)
      add_test(NAME python.${suite}.np${np}
               COMMAND ${_mpirun} -np ${np} ${TESSERA_PYTHON_EXECUTABLE} -m pytest -q
                       -p no:cacheprovider
                       ${PROJECT_SOURCE_DIR}/bindings/python/tests/test_${suite}.py)
      set_tests_properties(python.${suite}.np${np} PROPERTIES LABELS "python;mpi" TIMEOUT 300
        PROCESSORS ${np} ENVIRONMENT
        "${TESSERA_MPI_TEST_ENV};PYTHONDONTWRITEBYTECODE=1;PYTHONPATH=${PROJECT_BINARY_DIR}/bindings/python")
    endforeach()
  endforeach()
endif()

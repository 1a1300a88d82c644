# tessera_library_visibility(TARGET): for objects that go into libtessera.so, which exports only
# what include/tessera/ marks TESSERA_API (tessera/export.h): hidden by default, C++, CUDA and
# inline functions alike. In the static libraries and executables this changes nothing.
function(tessera_library_visibility target)
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden
                        CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_compile_definitions(${target} PRIVATE TESSERA_BUILDING_LIBRARY)
endfunction()

# tessera_glob_library(NAME DIRS d… LINKS l… [NO_MPI]): a static library of every .cpp in DIRS
# (an INTERFACE library while a folder is still empty), with tessera's flags; NO_MPI for one
# that does not link MPI (its precompiled header leaves mpi.h out).
function(tessera_glob_library name)
  cmake_parse_arguments(ARG "NO_MPI" "" "DIRS;LINKS;PATTERNS" ${ARGN})
  if(NOT ARG_PATTERNS)
    set(ARG_PATTERNS "*.cpp")
  endif()
  set(srcs "")
  foreach(d IN LISTS ARG_DIRS)
    foreach(p IN LISTS ARG_PATTERNS)
      file(GLOB found CONFIGURE_DEPENDS ${d}/${p})
      list(APPEND srcs ${found})
    endforeach()
  endforeach()
  if(srcs)
    add_library(${name} STATIC ${srcs})
    # libtessera.so is linked from these same objects (src/app/api/CMakeLists.txt). Only these: the
    # tests' shared precompiled header must match their executables' flags.
    if(TESSERA_BUILD_LIBRARY)
      set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
      tessera_library_visibility(${name})
    endif()
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src
                                                 ${PROJECT_SOURCE_DIR}/src/app
                                                 ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(${name} PUBLIC ${ARG_LINKS} PRIVATE tessera_warnings tessera_fp
                                                              tessera_sanitizers)
    if(ARG_NO_MPI)
      tessera_build_speed(${name} NO_MPI)
    else()
      tessera_build_speed(${name})
    endif()
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src
                                                    ${PROJECT_SOURCE_DIR}/src/app
                                                    ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(${name} INTERFACE ${ARG_LINKS})
  endif()
endfunction()

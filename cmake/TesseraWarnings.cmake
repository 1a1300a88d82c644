# Interface targets linked by tessera's own targets and tests, never pushed on users.
add_library(tessera_warnings INTERFACE)
target_compile_options(tessera_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>
  $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<BOOL:${TESSERA_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)

# Reproducible sums depend on every add being rounded on its own: no fused multiply-add.
add_library(tessera_fp INTERFACE)
target_compile_options(tessera_fp INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-ffp-contract=off>
  $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)

add_library(tessera_sanitizers INTERFACE)
if(TESSERA_SANITIZE STREQUAL "address")
  set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(TESSERA_SANITIZE STREQUAL "thread")
  set(_san -fsanitize=thread -fno-omit-frame-pointer)
endif()
if(_san)
  target_compile_options(tessera_sanitizers INTERFACE $<$<COMPILE_LANGUAGE:C,CXX>:${_san}>)
  target_link_options(tessera_sanitizers INTERFACE ${_san})
endif()
# AddressSanitizer executables are linked as position-dependent ones: a position-independent
# `tessera` carries 1.9 million relative relocations (51 MB of instrumented data), which every
# process applied at start, writing every page of that data first: 0.3 CPU-s per start, 0.14
# without, and the command-line tests start it many hundred times. (ThreadSanitizer needs PIE.)
if(TESSERA_SANITIZE STREQUAL "address")
  include(CheckLinkerFlag)
  check_linker_flag(CXX -no-pie TESSERA_LINKER_NO_PIE)
  if(TESSERA_LINKER_NO_PIE)
    target_link_options(tessera_sanitizers INTERFACE
                        $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
  endif()
endif()

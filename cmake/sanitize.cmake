# SPDX-License-Identifier: BSD-3-Clause
# OPTIREDUCE_SANITIZE=thread|address|undefined|address+undefined builds everything (library, tools,
# test programs) with that sanitizer; scripts/sanitize.sh runs the TSan build and the
# AddressSanitizer + UndefinedBehaviorSanitizer one. Empty (the default): no sanitizer.
#
# The preload library is instrumented, but the programs MPI starts (and mpirun itself) may not be,
# and a sanitizer runtime must be the first library loaded into a process. So the tests put
# OPTIREDUCE_SANITIZER_PRELOAD (the runtime followed by ":") in front of the library in
# LD_PRELOAD, and test/CMakeLists.txt hands the runtime's options to every test process.
set(OPTIREDUCE_SANITIZE "" CACHE STRING
  "Build with a sanitizer: thread, address, undefined or address+undefined (empty: none)")
set_property(CACHE OPTIREDUCE_SANITIZE PROPERTY STRINGS "" thread address undefined address+undefined)

set(OPTIREDUCE_SANITIZER_PRELOAD "")
set(OPTIREDUCE_SANITIZER_OPTIONS "")
if(NOT OPTIREDUCE_SANITIZE)
  return()
endif()

set(_suppressions ${PROJECT_SOURCE_DIR}/test/sanitizers)
if(OPTIREDUCE_SANITIZE STREQUAL "thread")
  set(_runtime libtsan.so)
  # exitcode=66 tells a race from a test's own failure; second_deadlock_stack names both sides of
  # a lock-order inversion.
  set(OPTIREDUCE_SANITIZER_OPTIONS
    "TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=${_suppressions}/tsan.supp")
elseif(OPTIREDUCE_SANITIZE MATCHES "^(address|undefined|address\\+undefined)$")
  # With both, ASan's runtime goes first (it must be the first library in the process); UBSan's
  # is then loaded as a dependency of the instrumented code. Every report is fatal.
  if(OPTIREDUCE_SANITIZE MATCHES "address")
    set(_runtime libasan.so)
    # Open MPI and libfabric never free much of what they allocate at exit: leaks are valgrind's
    # test (engine_valgrind_teardown_*), which judges only our frames.
    # exitcode=67 tells an ASan report from a test's own failure.
    list(APPEND OPTIREDUCE_SANITIZER_OPTIONS "ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:exitcode=67")
  else()
    set(_runtime libubsan.so)
  endif()
  if(OPTIREDUCE_SANITIZE MATCHES "undefined")
    list(APPEND OPTIREDUCE_SANITIZER_OPTIONS "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
else()
  message(FATAL_ERROR
    "OPTIREDUCE_SANITIZE='${OPTIREDUCE_SANITIZE}': expected thread, address, undefined, address+undefined or empty")
endif()

string(REPLACE "+" "," _flags "${OPTIREDUCE_SANITIZE}")
add_compile_options(-fsanitize=${_flags} -fno-omit-frame-pointer)
add_link_options(-fsanitize=${_flags})

execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_runtime}
  OUTPUT_VARIABLE _runtime_path OUTPUT_STRIP_TRAILING_WHITESPACE)
# Without a directory in it, the compiler did not find the runtime: say so now, not in every test.
if(NOT IS_ABSOLUTE "${_runtime_path}" OR NOT EXISTS "${_runtime_path}")
  message(FATAL_ERROR "OPTIREDUCE_SANITIZE=${OPTIREDUCE_SANITIZE}: ${CMAKE_CXX_COMPILER} has no "
    "${_runtime} (Debian: the libgcc-<version>-dev package of the compiler)")
endif()
get_filename_component(_runtime_path "${_runtime_path}" REALPATH)
set(OPTIREDUCE_SANITIZER_PRELOAD "${_runtime_path}:")
message(STATUS "OPTIREDUCE_SANITIZE=${OPTIREDUCE_SANITIZE}: test ranks preload ${_runtime_path}")

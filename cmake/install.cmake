# SPDX-License-Identifier: BSD-3-Clause
# Install layout, and the two ways other projects find optireduce: a CMake package
# (find_package(optireduce)) and pkg-config (optireduce.pc, optireduce-mpich.pc).
#
#   lib/liboptireduce.so[.0], lib/liboptireduce-mpich.so[.0]    the preload libraries
#   include/optireduce/optireduce.h                             the public C API
#   include/optireduce/stats_fields.h                           its list of counters
#   lib/cmake/optireduce/, lib/pkgconfig/                       package files
#   bin/optireduce-info, bin/optireduce-run, bin/optireduce-bench[-mpich],
#   bin/optireduce-channel-bench
include(CMakePackageConfigHelpers)

set(OPTIREDUCE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/optireduce)

set(_optireduce_libraries optireduce)
if(TARGET optireduce-mpich)
  list(APPEND _optireduce_libraries optireduce-mpich)
endif()

# The libraries link optireduce_core, libfabric and hwloc PRIVATE. For a shared library CMake
# exports none of that (it is inside the .so or a DT_NEEDED of it), so the export set holds the
# two libraries alone and consumers inherit no build-tree targets.
install(TARGETS ${_optireduce_libraries}
  EXPORT optireduceTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/include/optireduce/optireduce.h
  ${PROJECT_SOURCE_DIR}/include/optireduce/stats_fields.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/optireduce)
install(EXPORT optireduceTargets
  NAMESPACE optireduce::
  DESTINATION ${OPTIREDUCE_CMAKE_DIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/optireduceConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/optireduceConfig.cmake
  INSTALL_DESTINATION ${OPTIREDUCE_CMAKE_DIR})
# The major version is the soname: a 0.x consumer keeps working with any later 0.y.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/optireduceConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/optireduceConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/optireduceConfigVersion.cmake
  DESTINATION ${OPTIREDUCE_CMAKE_DIR})

# pkg-config files locate the prefix from their own directory (${pcfiledir}), so they stay
# right when `cmake --install --prefix` or a package manager moves the tree.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(OPTIREDUCE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(OPTIREDUCE_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _optireduce_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" _optireduce_up "${_optireduce_up}")
  set(OPTIREDUCE_PC_PREFIX "\${pcfiledir}/${_optireduce_up}")
  set(OPTIREDUCE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(OPTIREDUCE_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(OPTIREDUCE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
foreach(_optireduce_lib IN LISTS _optireduce_libraries)
  if(_optireduce_lib STREQUAL "optireduce")
    set(OPTIREDUCE_PC_MPI "Open MPI")
  else()
    set(OPTIREDUCE_PC_MPI "MPICH")
  endif()
  set(OPTIREDUCE_PC_NAME ${_optireduce_lib})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/optireduce.pc.in
    ${CMAKE_CURRENT_BINARY_DIR}/${_optireduce_lib}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${_optireduce_lib}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# Tools. optireduce-info links liboptireduce and must find the one installed beside it, wherever
# the prefix lands; the benchmarks only look for a preloaded library and need no RPATH.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(optireduce-info PROPERTIES INSTALL_RPATH "${CMAKE_INSTALL_LIBDIR}")
else()
  set_target_properties(optireduce-info PROPERTIES
    INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()
install(TARGETS optireduce-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(_optireduce_bench optireduce-bench optireduce-bench-mpich optireduce-channel-bench)
  if(TARGET ${_optireduce_bench})
    install(TARGETS ${_optireduce_bench} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
# The launcher as installed carries the project's version for --version (run from the source tree
# it reads CMakeLists.txt instead); the configured copy is the one installed.
configure_file(${PROJECT_SOURCE_DIR}/scripts/optireduce-run
  ${CMAKE_CURRENT_BINARY_DIR}/scripts/optireduce-run @ONLY)
install(PROGRAMS ${CMAKE_CURRENT_BINARY_DIR}/scripts/optireduce-run
  DESTINATION ${CMAKE_INSTALL_BINDIR})

# SPDX-License-Identifier: BSD-3-Clause
# Which UCX Manifold builds against, and how the built and installed binaries find it again.
#
# MF_UCX_PKGCONFIG is a directory of ucx*.pc files that pkg-config searches first. It defaults
# to build/ucx-pkgconfig of the source tree when tools/install-deps.sh has made it (UCX 1.22
# from the libucx-cu12 wheel, see docs/design/DESIGN.md section 3). Empty means whatever UCX
# pkg-config finds on its own, e.g. a system UCX with InfiniBand support (at least 1.13):
#   cmake -S . -B build/x -DMF_UCX_PKGCONFIG=
# The value is cached, so re-configuring (also the automatic re-run from ninja) keeps it.

function(mf_reset_ucx_lookup)
  # FindPkgConfig caches its answer and every library it located; a new directory needs a new
  # lookup.
  unset(__pkg_config_checked_UCX CACHE)
  get_cmake_property(cached CACHE_VARIABLES)
  foreach(var IN LISTS cached)
    if(var MATCHES "^pkgcfg_lib_UCX_")
      unset(${var} CACHE)
    endif()
  endforeach()
endfunction()

macro(mf_find_ucx)
  set(_mf_ucx_pc_default "")
  if(EXISTS "${CMAKE_SOURCE_DIR}/build/ucx-pkgconfig/ucx.pc")
    set(_mf_ucx_pc_default "${CMAKE_SOURCE_DIR}/build/ucx-pkgconfig")
  endif()
  set(MF_UCX_PKGCONFIG "${_mf_ucx_pc_default}" CACHE PATH
      "directory with the ucx.pc to build against (empty: the UCX pkg-config finds)")
  if(MF_UCX_PKGCONFIG)
    if(NOT EXISTS "${MF_UCX_PKGCONFIG}/ucx.pc")
      message(FATAL_ERROR "MF_UCX_PKGCONFIG=${MF_UCX_PKGCONFIG} has no ucx.pc "
                          "(run tools/install-deps.sh, or set it empty for the system UCX)")
    endif()
    if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
      set(ENV{PKG_CONFIG_PATH} "${MF_UCX_PKGCONFIG}:$ENV{PKG_CONFIG_PATH}")
    else()
      set(ENV{PKG_CONFIG_PATH} "${MF_UCX_PKGCONFIG}")
    endif()
  endif()
  if(NOT "${MF_UCX_PKGCONFIG}" STREQUAL "${_MF_UCX_PKGCONFIG_USED}")
    mf_reset_ucx_lookup()
    set(_MF_UCX_PKGCONFIG_USED "${MF_UCX_PKGCONFIG}" CACHE INTERNAL "")
  endif()
  pkg_check_modules(UCX REQUIRED IMPORTED_TARGET ucx>=1.13)
  message(STATUS "UCX ${UCX_VERSION} in ${UCX_LIBDIR}")

  # The build tree's RUNPATH already names UCX's directory (CMake adds the directories of the
  # libraries a target links). The installed copies need it said: the executables find
  # libmpi_abi next to them, and everything finds a UCX outside the default search path
  # (the wheel's) where it was at build time.
  file(RELATIVE_PATH _mf_bin_to_lib "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(CMAKE_INSTALL_RPATH "\$ORIGIN/${_mf_bin_to_lib}")
  if(NOT UCX_LIBDIR IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    list(APPEND CMAKE_INSTALL_RPATH "${UCX_LIBDIR}")
  endif()
endmacro()

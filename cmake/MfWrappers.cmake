# SPDX-License-Identifier: BSD-3-Clause
# Compiler wrappers mpicc, mpicxx and their standard-ABI aliases mpicc_abi, mpicxx_abi, made
# from include/mpicc.in. mf_install_wrappers() writes a build-tree copy of each into
# ${CMAKE_BINARY_DIR}/bin (absolute paths to build/include and build/lib) and an installed
# copy, which finds include/ and lib/ relative to its own location so the prefix given to
# "cmake --install" can differ from the configured one.

function(mf_wrapper_extra_flags out_var)
  set(flags "")
  if(MF_SANITIZE STREQUAL "address")
    # an instrumented libmpi_abi needs the sanitizer runtime loaded first by the program
    set(flags "-fsanitize=address,undefined")
  elseif(MF_SANITIZE STREQUAL "thread")
    set(flags "-fsanitize=thread")
  endif()
  set(${out_var} "${flags}" PARENT_SCOPE)
endfunction()

# mf_configure_wrapper(<output> <name> <compiler> <env-var> <incdir> <libdir>): the two
# directories are shell words; "$bindir" in them is the directory the script runs from.
function(mf_configure_wrapper output name compiler env incdir libdir)
  set(MF_WRAPPER_NAME ${name})
  set(MF_WRAPPER_COMPILER ${compiler})
  set(MF_WRAPPER_COMPILER_ENV ${env})
  set(MF_WRAPPER_INCDIR ${incdir})
  set(MF_WRAPPER_LIBDIR ${libdir})
  mf_wrapper_extra_flags(MF_WRAPPER_EXTRA_FLAGS)
  configure_file(
    ${CMAKE_SOURCE_DIR}/include/mpicc.in ${output} @ONLY
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                     WORLD_EXECUTE)
endfunction()

function(mf_install_wrappers)
  set(install_dir ${CMAKE_BINARY_DIR}/wrappers-install)
  set(bindir ${CMAKE_INSTALL_FULL_BINDIR})
  file(RELATIVE_PATH rel_inc ${bindir} ${CMAKE_INSTALL_FULL_INCLUDEDIR})
  file(RELATIVE_PATH rel_lib ${bindir} ${CMAKE_INSTALL_FULL_LIBDIR})

  foreach(name mpicc mpicc_abi mpicxx mpicxx_abi)
    if(name MATCHES "^mpicxx")
      set(compiler ${CMAKE_CXX_COMPILER})
      set(env MANIFOLD_CXX)
    else()
      set(compiler ${CMAKE_C_COMPILER})
      set(env MANIFOLD_CC)
    endif()
    mf_configure_wrapper(${CMAKE_BINARY_DIR}/bin/${name} ${name} ${compiler} ${env}
                         ${CMAKE_BINARY_DIR}/include ${CMAKE_BINARY_DIR}/lib)
    mf_configure_wrapper(${install_dir}/${name} ${name} ${compiler} ${env}
                         "$bindir/${rel_inc}" "$bindir/${rel_lib}")
    install(PROGRAMS ${install_dir}/${name} DESTINATION ${CMAKE_INSTALL_BINDIR})
  endforeach()
endfunction()

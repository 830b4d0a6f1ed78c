# SPDX-License-Identifier: BSD-3-Clause
# Build-time generation of the MPI-5.0 ABI header and of the binding stubs.
# mf_generate_header() makes ${CMAKE_BINARY_DIR}/include/mpi.h from api/mpi_api.json,
# api/abi_constants.txt and include/mpi.h.in (target mf_mpi_h; link the INTERFACE library
# mf_mpi_headers to get the include directory and the dependency). mf_generate_bindings()
# makes the C file of "unsupported" stubs for every ABI function that has no hand-written
# binding, plus unimplemented.txt next to it. Both use gen/*.py with Python's stdlib only.

set(MF_API_JSON ${CMAKE_SOURCE_DIR}/api/mpi_api.json)
set(MF_ABI_CONSTANTS ${CMAKE_SOURCE_DIR}/api/abi_constants.txt)
set(MF_GEN_DIR ${CMAKE_SOURCE_DIR}/gen)

function(mf_generate_header)
  set(template ${CMAKE_SOURCE_DIR}/include/mpi.h.in)
  set(output ${CMAKE_BINARY_DIR}/include/mpi.h)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${Python3_EXECUTABLE} ${MF_GEN_DIR}/gen_mpi_h.py --api ${MF_API_JSON}
            --constants ${MF_ABI_CONSTANTS} --template ${template} --output ${output}
    DEPENDS ${MF_GEN_DIR}/gen_mpi_h.py ${MF_GEN_DIR}/abi_table.py ${MF_GEN_DIR}/c_layout.py
            ${MF_API_JSON} ${MF_ABI_CONSTANTS} ${template}
    COMMENT "Generating include/mpi.h"
    VERBATIM)
  add_custom_target(mf_mpi_h ALL DEPENDS ${output})

  add_library(mf_mpi_headers INTERFACE)
  target_include_directories(mf_mpi_headers INTERFACE ${CMAKE_BINARY_DIR}/include)
  add_dependencies(mf_mpi_headers mf_mpi_h)

  # Extensions outside the standard ABI, and the opt-in Fortran names: plain headers next to
  # mpi.h.
  configure_file(${CMAKE_SOURCE_DIR}/include/mpix.h ${CMAKE_BINARY_DIR}/include/mpix.h COPYONLY)
  configure_file(${CMAKE_SOURCE_DIR}/include/mpi_fint.h ${CMAKE_BINARY_DIR}/include/mpi_fint.h
                 COPYONLY)
  install(FILES ${output} ${CMAKE_BINARY_DIR}/include/mpix.h
                ${CMAKE_BINARY_DIR}/include/mpi_fint.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# mf_generate_bindings(OUTPUT <c-file> SOURCES <hand-written .c files...>)
# Re-runs when the API table, the generator or any hand-written file changes. The path of
# unimplemented.txt is kept in the global property MF_UNIMPLEMENTED_LIST for the tests.
function(mf_generate_bindings)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUTPUT" "SOURCES")
  if(NOT arg_OUTPUT)
    message(FATAL_ERROR "mf_generate_bindings: OUTPUT is required")
  endif()
  get_filename_component(output ${arg_OUTPUT} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  get_filename_component(output_dir ${output} DIRECTORY)
  set(listing ${output_dir}/unimplemented.txt)
  set(sources "")
  foreach(source IN LISTS arg_SOURCES)
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND sources ${path})
  endforeach()
  add_custom_command(
    OUTPUT ${output} ${listing}
    COMMAND ${Python3_EXECUTABLE} ${MF_GEN_DIR}/gen_bindings.py --api ${MF_API_JSON}
            --output ${output} ${sources}
    DEPENDS ${MF_GEN_DIR}/gen_bindings.py ${MF_GEN_DIR}/c_layout.py ${MF_API_JSON} ${sources}
    COMMENT "Generating binding stubs for unimplemented MPI functions"
    VERBATIM)
  set_property(GLOBAL PROPERTY MF_UNIMPLEMENTED_LIST ${listing})
endfunction()

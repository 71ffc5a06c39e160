# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DBINDIR=... -DDATADIR=...
#       -P run_consumer_test.cmake
# Installs the build into WORK_DIR/prefix, builds the consumer project against it, runs it, and
# runs the installed `tprop` command.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR BINDIR DATADIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run_step("configure consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build
         -G Ninja -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
run_step("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer program failed (${rc})")
endif()

# The installed `tprop` command finds its default scene in the install (share/tprop), not in
# the source or build tree.
set(installed_scene ${WORK_DIR}/prefix/${DATADIR}/tprop/solar_system.json)
execute_process(COMMAND ${WORK_DIR}/prefix/${BINDIR}/tprop run --backend cpu --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed tprop run failed (${rc}):\n${out}\n${err}")
endif()
string(JSON input GET "${out}" input)
if(NOT input STREQUAL installed_scene)
  message(FATAL_ERROR "the installed tprop read its default scene from ${input}, expected "
                      "${installed_scene}")
endif()
message(STATUS "installed tprop: default scene ${input}: ok")

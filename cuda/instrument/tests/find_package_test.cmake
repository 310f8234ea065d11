# cmake -P script: install the instrument component, then configure, build and run tests/consumer
# against it with find_package(sightline). Inputs: BUILD_DIR, CONSUMER_DIR, WORK_DIR, GENERATOR.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                        --component instrument
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed:\n${out}")
endif()
foreach(f include/sightline/instrument.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install did not produce ${prefix}/${f}")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*/sightlineConfig.cmake ${prefix}/*/sightlineConfigVersion.cmake)
list(LENGTH config_files n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected sightlineConfig.cmake and sightlineConfigVersion.cmake, found: ${config_files}")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
                        -DCMAKE_PREFIX_PATH=${prefix}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  if(out MATCHES "No CMAKE_(C|CXX)_COMPILER could be found|Could not create named generator")
    message("SKIP: cannot configure the consumer here:\n${out}")
    cmake_language(EXIT 77)
  endif()
  message(FATAL_ERROR "configuring the consumer failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed:\n${out}")
endif()

foreach(exe consumer_cxx consumer_c consumer_static)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env SIGHTLINE_ITERATION_LOG=stderr
                          SIGHTLINE_NVTX_LEVEL=2 ${WORK_DIR}/build/${exe}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${exe} exited with ${rc}:\n${out}\n${err}")
  endif()
  if(NOT err MATCHES "\"schema_version\":1,\"iteration\":2," OR NOT err MATCHES "\"generated_tokens\":4")
    message(FATAL_ERROR "${exe} did not log iterations as expected:\n${err}")
  endif()
  message(STATUS "${exe}: ok")
endforeach()

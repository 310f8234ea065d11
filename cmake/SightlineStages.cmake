# The layered build: one static library per stage of src/ (DESIGN.md, "Architecture"), each linking
# only the stages below it, and a check that refuses an include of a stage a stage does not depend
# on ("upward" or sideways), at configure time, at every build, and as a ctest.
#
#   sightline_add_stage(NAME analyses DEPS base model report kernel LIBS fmt::fmt simdjson::simdjson
#                       ROOMS analyses "findings: findings/*" "registry: registry.cc")
#     -> library sightline_analyses from src/analyses/**.cc (globbed: a new file needs no edit here;
#        a stage without .cc files is an INTERFACE library)
#   ROOMS (optional) splits a stage into rooms, bottom-up, the same way: a file may include the
#   stage's files of its own room and of the rooms before it. "name: glob..." takes the files the
#   globs match (relative to the stage's folder, `*` any characters, `/` included); the room given
#   without globs takes the rest. "name(a b): glob..." narrows what the room may include to its own
#   files and those of rooms a and b (each declared before it): sideways includes between rooms
#   that do not name each other are refused too.
#   sightline_finish_stages(TOP cli)   after the last stage: writes the allowed-include map (TOP:
#     what sits above every stage and may include them all, the CLI), checks it, and the tests
#     against it (a test of stage S includes no stage S may not; tests/CMakeLists.txt)
#
# Includes are written from src/ ("analyses/overview/overview.h"), so every stage compiles with
# src/ on its private include path; what a stage may include is the check's business, not the
# compiler's.

set(SIGHTLINE_STAGES "" CACHE INTERNAL "")
set(SIGHTLINE_LAYERING_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/CheckLayering.cmake)
# The tests are checked too: each lives in the folder of the stage it tests (tests/CMakeLists.txt).
set(SIGHTLINE_LAYERING_TESTS ${PROJECT_SOURCE_DIR}/tests)
# And the GPU side (cuda/): of src/ it includes and compiles only the one stage it shares.
set(SIGHTLINE_LAYERING_GPU ${PROJECT_SOURCE_DIR}/cuda)
set(SIGHTLINE_GPU_STAGE shared)

function(sightline_add_stage)
  cmake_parse_arguments(ARG "" "NAME" "DEPS;LIBS;ROOMS" ${ARGN})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_NAME})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cc)
  set(target sightline_${ARG_NAME})
  if(sources)
    add_library(${target} STATIC ${sources})
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                               ${PROJECT_SOURCE_DIR}/include)
    target_compile_definitions(${target} PRIVATE SIGHTLINE_VERSION="${PROJECT_VERSION}")
    # SIGHTLINE_UNITY_BUILD (src/CMakeLists.txt): the stage's files compiled in batches, one
    # translation unit per batch, except those marked SKIP_UNITY_BUILD_INCLUSION.
    if(SIGHTLINE_UNITY_BUILD)
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                                 UNITY_BUILD_BATCH_SIZE ${SIGHTLINE_UNITY_BATCH_SIZE})
    endif()
    set(scope PUBLIC)
  else()
    # A stage of headers only: nothing to compile, an INTERFACE library that carries its DEPS and
    # LIBS to the stages that link it.
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  foreach(dep IN LISTS ARG_DEPS)
    if(NOT TARGET sightline_${dep})
      message(FATAL_ERROR "stage ${ARG_NAME} depends on ${dep}, which is not defined yet: "
                          "stages are declared bottom-up in src/CMakeLists.txt")
    endif()
    target_link_libraries(${target} ${scope} sightline_${dep})
  endforeach()
  if(ARG_LIBS)
    target_link_libraries(${target} ${scope} ${ARG_LIBS})
  endif()
  # What the stage may include: itself and everything below it.
  set(allowed ${ARG_NAME})
  foreach(dep IN LISTS ARG_DEPS)
    list(APPEND allowed ${SIGHTLINE_ALLOWED_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set(SIGHTLINE_ALLOWED_${ARG_NAME} ${allowed} CACHE INTERNAL "")
  set(SIGHTLINE_STAGES ${SIGHTLINE_STAGES} ${ARG_NAME} CACHE INTERNAL "")
  set(rooms "")
  foreach(room IN LISTS ARG_ROOMS)
    string(REGEX MATCH "^([a-z_]+)(\\(([a-z_ ]*)\\))?(:(.*))?$" matched "${room}")
    if(NOT matched)
      message(FATAL_ERROR "stage ${ARG_NAME}: room '${room}' is not \"name\", \"name: glob...\" "
                          "or \"name(room...): glob...\"")
    endif()
    set(name ${CMAKE_MATCH_1})
    set(has_uses "${CMAKE_MATCH_2}")
    separate_arguments(uses UNIX_COMMAND "${CMAKE_MATCH_3}")
    separate_arguments(globs UNIX_COMMAND "${CMAKE_MATCH_5}")
    foreach(use IN LISTS uses)
      if(NOT use IN_LIST rooms)
        message(FATAL_ERROR "stage ${ARG_NAME}: room '${name}' uses '${use}', which is not a room "
                            "declared before it (rooms are listed bottom-up)")
      endif()
    endforeach()
    list(APPEND rooms ${name})
    set(SIGHTLINE_ROOM_${ARG_NAME}_${name} "${globs}" CACHE INTERNAL "")
    # The rooms it may include, itself first; unset: every room before it.
    if(has_uses)
      set(SIGHTLINE_ROOM_USES_${ARG_NAME}_${name} ${name} ${uses} CACHE INTERNAL "")
    else()
      unset(SIGHTLINE_ROOM_USES_${ARG_NAME}_${name} CACHE)
    endif()
  endforeach()
  set(SIGHTLINE_ROOMS_${ARG_NAME} "${rooms}" CACHE INTERNAL "")
  if(TARGET sightline_layering)
    add_dependencies(${target} sightline_layering)
  endif()
endfunction()

function(sightline_finish_stages)
  cmake_parse_arguments(ARG "" "TOP" "" ${ARGN})
  set(map ${CMAKE_BINARY_DIR}/sightline_layering_map.cmake)
  set(content "# Generated by cmake/SightlineStages.cmake: what each stage of src/ may include.\n")
  string(APPEND content "set(STAGES ${SIGHTLINE_STAGES})\n")
  if(ARG_TOP)
    string(APPEND content "set(TOP ${ARG_TOP})\n")
  endif()
  foreach(stage IN LISTS SIGHTLINE_STAGES)
    string(APPEND content "set(ALLOWED_${stage} ${SIGHTLINE_ALLOWED_${stage}})\n")
    if(SIGHTLINE_ROOMS_${stage})
      string(APPEND content "set(ROOMS_${stage} ${SIGHTLINE_ROOMS_${stage}})\n")
      foreach(room IN LISTS SIGHTLINE_ROOMS_${stage})
        string(APPEND content "set(ROOM_${stage}_${room} ${SIGHTLINE_ROOM_${stage}_${room}})\n")
        if(DEFINED SIGHTLINE_ROOM_USES_${stage}_${room})
          string(APPEND content
                 "set(ROOM_USES_${stage}_${room} ${SIGHTLINE_ROOM_USES_${stage}_${room}})\n")
        endif()
      endforeach()
    endif()
  endforeach()
  file(WRITE ${map} "${content}")
  # At configure time ...
  set(SRC ${CMAKE_CURRENT_SOURCE_DIR})
  set(MAP ${map})
  set(TESTS ${SIGHTLINE_LAYERING_TESTS})
  set(GPU ${SIGHTLINE_LAYERING_GPU})
  set(GPU_STAGE ${SIGHTLINE_GPU_STAGE})
  include(${SIGHTLINE_LAYERING_SCRIPT})
  # ... and before every build of a stage (an include added after configuring is caught too).
  foreach(stage IN LISTS SIGHTLINE_STAGES)
    add_dependencies(sightline_${stage} sightline_layering)
  endforeach()
endfunction()

add_custom_target(sightline_layering
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR}/src
          -DMAP=${CMAKE_BINARY_DIR}/sightline_layering_map.cmake -DTESTS=${SIGHTLINE_LAYERING_TESTS}
          -DGPU=${SIGHTLINE_LAYERING_GPU} -DGPU_STAGE=${SIGHTLINE_GPU_STAGE}
          -P ${SIGHTLINE_LAYERING_SCRIPT}
  COMMENT "Checking that no stage of src/, and no test, includes a stage above it"
  VERBATIM)

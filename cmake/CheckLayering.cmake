# Refuses includes across the layers of src/: a file of stage S may include "T/..." only when T is S
# or a stage S depends on (directly or below). Inside a stage that has rooms, the same one level
# down: a file of room R may include a file of its stage only when that file's room is R or a room
# declared below R, or, when R names the rooms it uses, one of those. MAP is a file setting STAGES,
# ALLOWED_<stage>, and for a stage with rooms ROOMS_<stage> (bottom-up), ROOM_<stage>_<room> (globs
# relative to the stage's folder; a room without globs takes every file no other room takes) and,
# for a room that names what it uses, ROOM_USES_<stage>_<room> (itself and those rooms) -- written
# by cmake/SightlineStages.cmake.
# SRC is the folder holding one folder per stage. Includes of anything that is not a stage
# ("sightline/" public headers, system headers) are free.
#
# With TESTS (the tests' folder), the same over the tests: a test lives in the folder of the stage
# it tests, tests/<stage>/, or in tests/<TOP>/ (TOP in the map: the CLI, above every stage: the
# program as a whole), and includes only what its stage may include, directly or through the
# helpers of tests/testing/ (an include of "testing/x.h" brings the stages that x.h and x.cc
# include, and those of the helpers they include). Other folders (data/, golden/) hold no tests.
#
# With GPU (the GPU side's folder, cuda/) and GPU_STAGE (the one stage it shares, shared): a file
# there (.cc, .h, .cu, .cuh, .c) may include of src/ only GPU_STAGE's files, and its build files
# (CMakeLists.txt, *.cmake, *.sh; comments aside) may name of src/ only GPU_STAGE's folder, so that
# the GPU side compiles nothing else of src/ either.
#
#   cmake -DSRC=src -DMAP=build/sightline_layering_map.cmake [-DTESTS=tests]
#         [-DGPU=cuda -DGPU_STAGE=shared] -P cmake/CheckLayering.cmake
# Fails (FATAL_ERROR, exit 1) listing every offending file and include. With -DCOUNT=ON it fails on
# nothing and prints, per stage with rooms, how many include edges join two of its files and how
# many of them the rooms refuse (upward, or sideways to a room the includer does not name), with
# the list.

if(NOT DEFINED SRC OR NOT DEFINED MAP)
  message(FATAL_ERROR "usage: cmake -DSRC=<src dir> -DMAP=<layering map> [-DTESTS=<tests dir>] "
                      "[-DCOUNT=ON] -P CheckLayering.cmake")
endif()
include(${MAP})
get_filename_component(SRC ${SRC} ABSOLUTE)

# The room of `rel` (a path inside stage `stage`'s folder) into `out`: the first room whose globs
# match, else the room without globs.
function(_sightline_room stage rel out)
  set(default "")
  foreach(room IN LISTS ROOMS_${stage})
    if(NOT ROOM_${stage}_${room})
      set(default ${room})
      continue()
    endif()
    foreach(glob IN LISTS ROOM_${stage}_${room})
      string(REPLACE "." "\\." re "${glob}")
      string(REPLACE "*" ".*" re "${re}")
      if(rel MATCHES "^${re}$")
        set(${out} ${room} PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
  set(${out} ${default} PARENT_SCOPE)
endfunction()

set(_violations "")
set(_counts "")
foreach(_stage IN LISTS STAGES)
  set(_edges 0)
  set(_upward "")
  file(GLOB_RECURSE _files ${SRC}/${_stage}/*.cc ${SRC}/${_stage}/*.h)
  foreach(_file IN LISTS _files)
    file(RELATIVE_PATH _rel ${SRC} ${_file})
    file(RELATIVE_PATH _in_stage ${SRC}/${_stage} ${_file})
    if(ROOMS_${_stage})
      _sightline_room(${_stage} ${_in_stage} _room)
      list(FIND ROOMS_${_stage} ${_room} _room_level)
      string(REGEX REPLACE "\\.(cc|h)$" "" _self ${_in_stage})
    endif()
    file(STRINGS ${_file} _includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[A-Za-z0-9_]+/")
    foreach(_line IN LISTS _includes)
      string(STRIP "${_line}" _line)
      string(REGEX REPLACE "^#[ \t]*include[ \t]+\"([A-Za-z0-9_]+)/([^\"]*)\".*$" "\\1;\\2"
                           _target "${_line}")
      list(GET _target 0 _target_stage)
      list(GET _target 1 _target_path)
      list(FIND STAGES ${_target_stage} _is_stage)
      if(_is_stage EQUAL -1)
        continue()
      endif()
      list(FIND ALLOWED_${_stage} ${_target_stage} _ok)
      if(_ok EQUAL -1)
        list(JOIN ALLOWED_${_stage} ", " _allowed)
        string(APPEND _violations
               "\n  src/${_rel}: ${_line} -- stage '${_stage}' may include only: ${_allowed}")
        continue()
      endif()
      if(NOT ROOMS_${_stage} OR NOT _target_stage STREQUAL _stage)
        continue()
      endif()
      # Inside a stage with rooms: a file's own header is not an edge.
      string(REGEX REPLACE "\\.(cc|h)$" "" _other ${_target_path})
      if(_other STREQUAL _self)
        continue()
      endif()
      math(EXPR _edges "${_edges} + 1")
      _sightline_room(${_stage} ${_target_path} _target_room)
      if(DEFINED ROOM_USES_${_stage}_${_room})
        set(_may ${ROOM_USES_${_stage}_${_room}})
      else()
        list(SUBLIST ROOMS_${_stage} 0 ${_room_level} _may)
        list(APPEND _may ${_room})
      endif()
      list(FIND _may ${_target_room} _allowed_room)
      if(_allowed_room EQUAL -1)
        list(JOIN _may ", " _may)
        set(_what "src/${_rel}: ${_line} -- room '${_stage}/${_room}' may include only the rooms: ${_may}")
        string(APPEND _upward "\n  ${_what}")
        if(NOT COUNT)
          string(APPEND _violations "\n  ${_what}")
        endif()
      endif()
    endforeach()
  endforeach()
  if(ROOMS_${_stage})
    string(REGEX MATCHALL "\n" _n "${_upward}")
    list(LENGTH _n _n)
    list(JOIN ROOMS_${_stage} " < " _order)
    string(APPEND _counts "\n${_stage} (rooms ${_order}): ${_edges} include edges between its files, "
                          "${_n} refused${_upward}")
  endif()
endforeach()
# The stages that the test helper `helper` (a path under tests/testing/) brings into a test that
# includes it: those it and its .cc include, and those of the helpers they include, into `out`.
function(_sightline_helper_stages helper out)
  string(MAKE_C_IDENTIFIER "${helper}" key)
  get_property(known GLOBAL PROPERTY _sightline_helper_${key} SET)
  if(known)
    get_property(stages GLOBAL PROPERTY _sightline_helper_${key})
    set(${out} "${stages}" PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY _sightline_helper_${key} "")  # helpers that include each other
  string(REGEX REPLACE "\\.h$" "" stem "${helper}")
  set(stages "")
  foreach(file IN ITEMS ${TESTS}/testing/${helper} ${TESTS}/testing/${stem}.cc)
    if(NOT EXISTS ${file})
      continue()
    endif()
    file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[A-Za-z0-9_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([A-Za-z0-9_]+)/([^\"]*)\".*$" "\\1;\\2"
                           target "${line}")
      list(GET target 0 target_stage)
      list(GET target 1 target_path)
      if(target_stage STREQUAL "testing")
        _sightline_helper_stages(${target_path} more)
        list(APPEND stages ${more})
      else()
        list(FIND STAGES ${target_stage} is_stage)
        if(NOT is_stage EQUAL -1)
          list(APPEND stages ${target_stage})
        endif()
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES stages)
  set_property(GLOBAL PROPERTY _sightline_helper_${key} "${stages}")
  set(${out} "${stages}" PARENT_SCOPE)
endfunction()

if(DEFINED TESTS)
  get_filename_component(TESTS ${TESTS} ABSOLUTE)
  get_filename_component(_tests_name ${TESTS} NAME)
  file(GLOB _loose LIST_DIRECTORIES false ${TESTS}/*.cc ${TESTS}/*.h)
  foreach(_file IN LISTS _loose)
    file(RELATIVE_PATH _rel ${TESTS} ${_file})
    string(APPEND _violations "\n  ${_tests_name}/${_rel}: not in a stage's folder -- a test lives "
                              "in ${_tests_name}/<the stage it tests>/")
    if(DEFINED TOP)
      string(APPEND _violations " or ${_tests_name}/${TOP}/ (the program as a whole)")
    endif()
  endforeach()
  file(GLOB _groups LIST_DIRECTORIES true ${TESTS}/*)
  foreach(_dir IN LISTS _groups)
    get_filename_component(_group ${_dir} NAME)
    list(FIND STAGES ${_group} _is_stage)
    if(NOT _is_stage EQUAL -1)
      set(_allowed ${ALLOWED_${_group}})
    elseif(DEFINED TOP AND _group STREQUAL TOP)
      set(_allowed ${STAGES})
    else()
      continue()
    endif()
    list(JOIN _allowed ", " _allowed_text)
    file(GLOB_RECURSE _files ${_dir}/*.cc ${_dir}/*.h)
    foreach(_file IN LISTS _files)
      file(RELATIVE_PATH _rel ${TESTS} ${_file})
      file(STRINGS ${_file} _includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[A-Za-z0-9_]+/")
      foreach(_line IN LISTS _includes)
        string(STRIP "${_line}" _line)
        string(REGEX REPLACE "^#[ \t]*include[ \t]+\"([A-Za-z0-9_]+)/([^\"]*)\".*$" "\\1;\\2"
                             _target "${_line}")
        list(GET _target 0 _target_stage)
        list(GET _target 1 _target_path)
        if(_target_stage STREQUAL "testing")
          _sightline_helper_stages(${_target_path} _brought)
          set(_above "")
          foreach(_stage IN LISTS _brought)
            list(FIND _allowed ${_stage} _ok)
            if(_ok EQUAL -1)
              list(APPEND _above ${_stage})
            endif()
          endforeach()
          if(_above)
            list(JOIN _above ", " _above)
            string(APPEND _violations "\n  ${_tests_name}/${_rel}: ${_line} brings ${_above} -- a "
                                      "test of stage '${_group}' may include only: "
                                      "${_allowed_text}")
          endif()
        else()
          list(FIND STAGES ${_target_stage} _is_stage)
          list(FIND _allowed ${_target_stage} _ok)
          if(NOT _is_stage EQUAL -1 AND _ok EQUAL -1)
            string(APPEND _violations "\n  ${_tests_name}/${_rel}: ${_line} -- a test of stage "
                                      "'${_group}' may include only: ${_allowed_text}")
          endif()
        endif()
      endforeach()
    endforeach()
  endforeach()
endif()

if(DEFINED GPU)
  get_filename_component(GPU ${GPU} ABSOLUTE)
  get_filename_component(_gpu_name ${GPU} NAME)
  file(GLOB_RECURSE _files ${GPU}/*.cc ${GPU}/*.h ${GPU}/*.cu ${GPU}/*.cuh ${GPU}/*.c)
  foreach(_file IN LISTS _files)
    file(RELATIVE_PATH _rel ${GPU} ${_file})
    file(STRINGS ${_file} _includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[A-Za-z0-9_]+/")
    foreach(_line IN LISTS _includes)
      string(STRIP "${_line}" _line)
      string(REGEX REPLACE "^#[ \t]*include[ \t]+\"([A-Za-z0-9_]+)/.*$" "\\1" _target_stage
                           "${_line}")
      list(FIND STAGES ${_target_stage} _is_stage)
      if(NOT _is_stage EQUAL -1 AND NOT _target_stage STREQUAL GPU_STAGE)
        string(APPEND _violations "\n  ${_gpu_name}/${_rel}: ${_line} -- the GPU side may include "
                                  "of src/ only ${GPU_STAGE}/")
      endif()
    endforeach()
  endforeach()
  file(GLOB_RECURSE _build_files ${GPU}/CMakeLists.txt ${GPU}/*.cmake ${GPU}/*.sh)
  foreach(_file IN LISTS _build_files)
    file(RELATIVE_PATH _rel ${GPU} ${_file})
    file(STRINGS ${_file} _lines REGEX "src/[A-Za-z0-9_]+/")
    foreach(_line IN LISTS _lines)
      if(_line MATCHES "^[ \t]*#")
        continue()
      endif()
      string(REGEX MATCHALL "src/[A-Za-z0-9_]+/" _refs "${_line}")
      foreach(_ref IN LISTS _refs)
        string(REGEX REPLACE "^src/([A-Za-z0-9_]+)/$" "\\1" _target_stage "${_ref}")
        list(FIND STAGES ${_target_stage} _is_stage)
        if(NOT _is_stage EQUAL -1 AND NOT _target_stage STREQUAL GPU_STAGE)
          string(STRIP "${_line}" _line)
          string(APPEND _violations "\n  ${_gpu_name}/${_rel}: ${_line} -- the GPU side may "
                                    "compile of src/ only ${GPU_STAGE}/")
        endif()
      endforeach()
    endforeach()
  endforeach()
endif()

if(COUNT)
  message("${_counts}")
endif()
if(_violations)
  message(FATAL_ERROR "layering: includes across the stages of src/, between rooms of a stage "
                      "that may not include each other, or from a test above the stage it tests "
                      "(DESIGN.md, \"Architecture\"), or from the GPU side to src/ beyond its shared stage:"
                      "${_violations}\nMove the shared code down to a stage or room both may "
                      "include, or change the stage's DEPS or ROOMS in src/CMakeLists.txt if the "
                      "dependency is intended; a test that needs a stage above its own belongs in "
                      "that stage's folder of tests/.")
endif()

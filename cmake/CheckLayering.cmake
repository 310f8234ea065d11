# Refuses includes across the layers of src/: a file of stage S may include "T/..." only when T is S
# or a stage S depends on (directly or below). Inside a stage that has rooms, the same one level
# down: a file of room R may include a file of its stage only when that file's room is R or a room
# declared below R. MAP is a file setting STAGES, ALLOWED_<stage>, and for a stage with rooms
# ROOMS_<stage> (bottom-up) and ROOM_<stage>_<room> (globs relative to the stage's folder; a room
# without globs takes every file no other room takes) -- written by cmake/SightlineStages.cmake.
# SRC is the folder holding one folder per stage. Includes of anything that is not a stage
# ("sightline/" public headers, system headers) are free.
#
#   cmake -DSRC=src -DMAP=build/sightline_layering_map.cmake -P cmake/CheckLayering.cmake
# Fails (FATAL_ERROR, exit 1) listing every offending file and include. With -DCOUNT=ON it fails on
# nothing and prints, per stage with rooms, how many include edges join two of its files and how
# many of them point upward (to a room above the includer's), with the list.

if(NOT DEFINED SRC OR NOT DEFINED MAP)
  message(FATAL_ERROR "usage: cmake -DSRC=<src dir> -DMAP=<layering map> [-DCOUNT=ON] "
                      "-P CheckLayering.cmake")
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
      list(FIND ROOMS_${_stage} ${_target_room} _target_level)
      if(_target_level GREATER _room_level)
        list(SUBLIST ROOMS_${_stage} 0 ${_room_level} _below)
        list(APPEND _below ${_room})
        list(JOIN _below ", " _below)
        set(_what "src/${_rel}: ${_line} -- room '${_stage}/${_room}' may include only the rooms: ${_below}")
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
                          "${_n} upward${_upward}")
  endif()
endforeach()
if(COUNT)
  message("${_counts}")
endif()
if(_violations)
  message(FATAL_ERROR "layering: includes across the stages of src/, or up the rooms of a stage "
                      "(DESIGN.md, \"Architecture\"):${_violations}\nMove the shared code down to "
                      "a stage or room both may include, or change the stage's DEPS or ROOMS in "
                      "src/CMakeLists.txt if the dependency is intended.")
endif()

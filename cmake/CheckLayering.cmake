# Refuses includes across the layers of src/: a file of stage S may include "T/..." only when T is S
# or a stage S depends on (directly or below). MAP is a file setting STAGES and ALLOWED_<stage>
# (written by cmake/SightlineStages.cmake); SRC is the folder holding one folder per stage.
# Includes of anything that is not a stage ("sightline/" public headers, system headers) are free.
#
#   cmake -DSRC=src -DMAP=build/sightline_layering_map.cmake -P cmake/CheckLayering.cmake
# Fails (FATAL_ERROR, exit 1) listing every offending file and include.

if(NOT DEFINED SRC OR NOT DEFINED MAP)
  message(FATAL_ERROR "usage: cmake -DSRC=<src dir> -DMAP=<layering map> -P CheckLayering.cmake")
endif()
include(${MAP})
set(_violations "")
foreach(_stage IN LISTS STAGES)
  file(GLOB_RECURSE _files ${SRC}/${_stage}/*.cc ${SRC}/${_stage}/*.h)
  foreach(_file IN LISTS _files)
    file(STRINGS ${_file} _includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[A-Za-z0-9_]+/")
    foreach(_line IN LISTS _includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([A-Za-z0-9_]+)/.*$" "\\1" _target
                           "${_line}")
      list(FIND STAGES ${_target} _is_stage)
      if(_is_stage EQUAL -1)
        continue()
      endif()
      list(FIND ALLOWED_${_stage} ${_target} _ok)
      if(_ok EQUAL -1)
        file(RELATIVE_PATH _rel ${SRC} ${_file})
        string(STRIP "${_line}" _line)
        list(JOIN ALLOWED_${_stage} ", " _allowed)
        string(APPEND _violations
               "\n  src/${_rel}: ${_line} -- stage '${_stage}' may include only: ${_allowed}")
      endif()
    endforeach()
  endforeach()
endforeach()
if(_violations)
  message(FATAL_ERROR "layering: includes across the stages of src/ (DESIGN.md, \"Architecture\"):"
                      "${_violations}\nMove the shared code down to a stage both may include, or "
                      "change the stage's DEPS in src/CMakeLists.txt if the dependency is intended.")
endif()

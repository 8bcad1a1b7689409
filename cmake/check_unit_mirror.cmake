# check_unit_mirror.cmake - fail when a source file has no unit test at its mirrored path and is
# not named, with a reason, in tests/unit/UNTESTED.
#
#   cmake -DROOT=<source tree> -P cmake/check_unit_mirror.cmake
#
# The rule: every <dir>/**/<name>.c under core/, controller/, webhook/, cli/ and certs/ is tested
# by tests/unit/<dir>/**/test_<name>.c (core/util/buf.c -> tests/unit/core/util/test_buf.c), the
# path tests/CMakeLists.txt builds one test executable from. A file without one is listed in
# tests/unit/UNTESTED as "<path> <reason>", one a line ('#' starts a comment). The tree is read
# when the check runs, so files others add or remove need no edit here. An entry whose file is
# gone, or whose test now exists, is reported as stale but does not fail the check: a branch that
# removes or tests a file must not break one that listed it.

cmake_minimum_required(VERSION 3.18)

set(SOURCE_DIRS "core;controller;webhook;cli;certs")

if(NOT ROOT)
  message(FATAL_ERROR "check_unit_mirror: pass -DROOT=<source tree>")
endif()

set(problems "")
set(stale "")

# The exemption list: path -> reason.
set(exempt "")
set(list_file "${ROOT}/tests/unit/UNTESTED")
if(EXISTS "${list_file}")
  file(STRINGS "${list_file}" lines)
  foreach(line ${lines})
    string(REGEX REPLACE "#.*" "" line "${line}")
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    if(NOT line MATCHES "^([^ \t]+)[ \t]+(.+)$")
      string(APPEND problems "  tests/unit/UNTESTED: \"${line}\" has no reason\n")
      continue()
    endif()
    set(path "${CMAKE_MATCH_1}")
    list(APPEND exempt "${path}")
  endforeach()
endif()

set(sources "")
foreach(dir ${SOURCE_DIRS})
  file(GLOB_RECURSE found RELATIVE "${ROOT}" "${ROOT}/${dir}/*.c")
  list(APPEND sources ${found})
endforeach()
list(SORT sources)

foreach(src ${sources})
  get_filename_component(sdir "${src}" DIRECTORY)
  get_filename_component(name "${src}" NAME)
  set(test "tests/unit/${sdir}/test_${name}")
  if(EXISTS "${ROOT}/${test}")
    if(src IN_LIST exempt)
      string(APPEND stale "  ${src}: listed in tests/unit/UNTESTED but ${test} exists\n")
    endif()
  elseif(NOT src IN_LIST exempt)
    string(APPEND problems
           "  ${src}: no unit test at ${test} (write it, or list the file with a reason in tests/unit/UNTESTED)\n")
  endif()
endforeach()

foreach(path ${exempt})
  if(NOT EXISTS "${ROOT}/${path}")
    string(APPEND stale "  ${path}: listed in tests/unit/UNTESTED but no longer in the tree\n")
  endif()
endforeach()

if(stale)
  message(NOTICE "check_unit_mirror: stale entries (not an error):\n${stale}")
endif()
if(problems)
  message(FATAL_ERROR "check_unit_mirror: source files without a unit test at the mirrored path:\n${problems}")
endif()
list(LENGTH sources n_sources)
list(LENGTH exempt n_exempt)
message(STATUS "check_unit_mirror: ${n_sources} source files, ${n_exempt} listed as untested")

# check_version.cmake - the deployment manifests name the version project() declares.
#
#   cmake -DROOT=<source tree> -DVERSION=<project version> -P cmake/check_version.cmake
#
# The programs take their version from util/version.h (generated from project(VERSION)); the
# manifests' app.kubernetes.io/version labels and image tags are text, so this keeps them in step.
cmake_minimum_required(VERSION 3.18)

file(GLOB manifests "${ROOT}/manifests/*.yaml")
set(bad "")
foreach(m ${manifests})
  file(STRINGS "${m}" lines REGEX "app\\.kubernetes\\.io/version:|image: .*gputri")
  foreach(line ${lines})
    set(found "")
    if(line MATCHES "app\\.kubernetes\\.io/version:[ \t]*\"?([^\" \t]+)")
      set(found "${CMAKE_MATCH_1}")
    elseif(line MATCHES "image:[ \t]*[^ \t]*gputri[^ \t:]*:([^ \t]+)")
      set(found "${CMAKE_MATCH_1}")
    endif()
    if(found)
      if(NOT found STREQUAL VERSION)
        get_filename_component(name "${m}" NAME)
        string(APPEND bad "  manifests/${name}: ${line}\n")
      endif()
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "manifests name another version than ${VERSION} (CMakeLists.txt project):\n${bad}")
endif()

# check_version.cmake - the deployment manifests, the Helm chart and the krew plugin manifest name
# the version project() declares.
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
# manifests/helm/gputri/Chart.yaml: version and appVersion; manifests/krew/gputri.yaml: spec.version (vX.Y.Z)
# and the release archive its uri names.
foreach(pair "manifests/helm/gputri/Chart.yaml|^(version|appVersion):[ \t]*\"?([^\" \t]+)"
             "manifests/krew/gputri.yaml|^  (version):[ \t]*v([^ \t]+)"
             "manifests/krew/gputri.yaml|(uri):.*/download/v([^/]+)/")
  string(FIND "${pair}" "|" sep)
  string(SUBSTRING "${pair}" 0 ${sep} rel)
  math(EXPR sep "${sep} + 1")
  string(SUBSTRING "${pair}" ${sep} -1 regex)
  if(NOT EXISTS "${ROOT}/${rel}")
    string(APPEND bad "  ${rel}: missing\n")
    continue()
  endif()
  file(STRINGS "${ROOT}/${rel}" lines REGEX "${regex}")
  if(NOT lines)
    string(APPEND bad "  ${rel}: no line matches ${regex}\n")
  endif()
  foreach(line ${lines})
    if(line MATCHES "${regex}" AND NOT CMAKE_MATCH_2 STREQUAL VERSION)
      string(APPEND bad "  ${rel}: ${line}\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "manifests/, manifests/helm/gputri or manifests/krew name another version than ${VERSION} (CMakeLists.txt project):\n${bad}")
endif()

# check_layers.cmake - fail when a source file includes a header of a layer above its own.
#
#   cmake -DROOT=<source tree> [-DSTAMP=<file to touch on success>] -P cmake/check_layers.cmake
#
# The rule (documented in core/CMakeLists.txt):
#   core/<layer>/ may include "<other>/..." only for the layers listed for it below, and a bare
#   "name.h" only when that file is in its own directory;
#   util, model, cel and classify include no network, JSON or TLS library headers;
#   the programs (controller/ cli/ webhook/ certs/) may include any core layer and bare names
#   from their own directory, never another program's headers.
# Every core/ directory must have a rule here, so a new layer is placed explicitly.

cmake_minimum_required(VERSION 3.18)

set(ALLOWED_util "util")
set(ALLOWED_model "util;model")
set(ALLOWED_cel "util;model;cel")
set(ALLOWED_classify "util;model;cel;classify")
set(ALLOWED_json "util;json")
set(ALLOWED_kube "util;model;json;kube")
set(ALLOWED_cache "util;model;json;kube;cache")
set(ALLOWED_triage "util;model;cel;classify;json;kube;cache;triage")
set(ALLOWED_http "util;http")
set(ALLOWED_pki "util;model;json;kube;pki")
set(CORE_LAYERS "util;model;cel;classify;json;kube;cache;triage;http;pki")
set(PURE_LAYERS "util;model;cel;classify")
set(PROGRAMS "controller;cli;webhook;certs")
# System headers the pure layers must not use.
set(IMPURE_SYSTEM_HEADERS "^(curl|json-c|openssl|gnutls)/|^(yaml|microhttpd)\\.h$")

if(NOT ROOT)
  message(FATAL_ERROR "check_layers: pass -DROOT=<source tree>")
endif()

set(violations "")

# Every directory under core/ needs a rule.
file(GLOB core_entries LIST_DIRECTORIES true RELATIVE "${ROOT}/core" "${ROOT}/core/*")
foreach(dir ${core_entries})
  if(IS_DIRECTORY "${ROOT}/core/${dir}" AND NOT dir IN_LIST CORE_LAYERS)
    string(APPEND violations
           "  core/${dir}/: a directory without a layer rule (add it to cmake/check_layers.cmake and core/CMakeLists.txt)\n")
  endif()
endforeach()

# check_file(<path relative to ROOT> <allowed "dir/" prefixes> <pure: TRUE/FALSE>)
function(check_file rel allowed pure)
  get_filename_component(dir "${ROOT}/${rel}" DIRECTORY)
  file(STRINGS "${ROOT}/${rel}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  set(found "")
  foreach(line ${lines})
    if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      set(inc "${CMAKE_MATCH_1}")
      if(inc MATCHES "^([^/]+)/")
        set(top "${CMAKE_MATCH_1}")
        if(NOT top IN_LIST allowed)
          string(APPEND found "  ${rel}: #include \"${inc}\" (layer ${top} is not below this file)\n")
        endif()
      elseif(NOT EXISTS "${dir}/${inc}")
        string(APPEND found "  ${rel}: #include \"${inc}\" (not in its own directory)\n")
      endif()
    elseif(pure AND line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
      set(inc "${CMAKE_MATCH_1}")
      if(inc MATCHES "${IMPURE_SYSTEM_HEADERS}")
        string(APPEND found "  ${rel}: #include <${inc}> (a pure layer does no I/O)\n")
      endif()
    endif()
  endforeach()
  set(violations "${violations}${found}" PARENT_SCOPE)
endfunction()

foreach(layer ${CORE_LAYERS})
  set(pure FALSE)
  if(layer IN_LIST PURE_LAYERS)
    set(pure TRUE)
  endif()
  file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/core/${layer}/*.c" "${ROOT}/core/${layer}/*.h")
  list(SORT files)
  foreach(f ${files})
    check_file("${f}" "${ALLOWED_${layer}}" ${pure})
  endforeach()
endforeach()

foreach(prog ${PROGRAMS})
  file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/${prog}/*.c" "${ROOT}/${prog}/*.h")
  list(SORT files)
  foreach(f ${files})
    check_file("${f}" "${CORE_LAYERS}" FALSE)
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "layer check failed (a lower layer includes a higher one):\n${violations}")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()

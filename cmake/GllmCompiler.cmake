# Compiler settings: warnings, ccache with PCH-safe sloppiness, and fast linking when available.
# Included once from the top-level CMakeLists.txt.
find_program(GLLM_CCACHE ccache)
if(GLLM_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # PCH-compatible ccache: the sloppiness flags let precompiled headers hit the cache.
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" ${GLLM_CCACHE})
  message(STATUS "GLLM: using ccache ${GLLM_CCACHE}")
endif()

if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  add_compile_options(-Wall -Wextra -Wno-unused-parameter)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=gold" GLLM_HAS_GOLD)
  if(GLLM_HAS_GOLD)
    add_link_options(-fuse-ld=gold)
  endif()
endif()

# Code that is not hot compiles at GLLM_COLD_OPT instead of the build type's -O3: the CLI's
# subcommands, the Qt widgets and the tests call into the engine, where the time goes, and
# compile faster at -O1.
set(GLLM_COLD_OPT "-O1" CACHE STRING
    "Optimisation of code that is not hot (CLI, widgets, tests) in Release builds; empty: -O3")

# gllm_cold_code(TARGET...): compiles the targets' own sources at GLLM_COLD_OPT (Release only).
function(gllm_cold_code)
  if(NOT GLLM_COLD_OPT)
    return()
  endif()
  foreach(t ${ARGN})
    if(TARGET ${t})
      target_compile_options(${t} PRIVATE $<$<CONFIG:Release>:${GLLM_COLD_OPT}>)
    endif()
  endforeach()
endfunction()

# gllm_names_torch(SRC OUT): OUT is TRUE when SRC, or a project header it includes ("engine/…",
# "tests/…", one level down), includes a torch header (torch/, ATen/, c10/). Such a file gains from
# the torch PCH; any other file only pays for loading it (5–12 s).
function(gllm_names_torch src out)
  file(READ ${src} _text)
  string(REGEX MATCHALL "#include \"(engine|tests)/[^\"]+\"" _includes "${_text}")
  foreach(inc ${_includes})
    string(REGEX REPLACE "#include \"([^\"]+)\"" "\\1" _header "${inc}")
    if(EXISTS ${PROJECT_SOURCE_DIR}/${_header})
      file(READ ${PROJECT_SOURCE_DIR}/${_header} _header_text)
      string(APPEND _text "${_header_text}")
    endif()
  endforeach()
  if(_text MATCHES "#include <(torch|ATen|c10)/")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

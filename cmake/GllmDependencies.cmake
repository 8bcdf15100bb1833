# Third-party dependencies: LibTorch, Eigen, nlohmann_json, sentencepiece, zlib, zstd, CLI11, and Qt 6
# (optional).
# Every package here is installed by scripts/setup.sh (Debian) or carried by scripts/device-check.sh.
find_package(Torch REQUIRED)
# LibTorch 2.10 and later refuse C++17 (torch/all.h: "C++20 or later compatible compiler is
# required"): with such a LibTorch (a GPU machine's pip torch) the project builds as C++20, else as
# C++17. The one place the language standard follows LibTorch; the 2.x compile check does the same
# per header set.
set(GLLM_TORCH_NEEDS_CXX20 OFF)
foreach(dir ${TORCH_INCLUDE_DIRS})
  if(EXISTS ${dir}/torch/all.h)
    file(STRINGS ${dir}/torch/all.h cxx20 REGEX "C\\+\\+20 or later")
    if(cxx20)
      set(GLLM_TORCH_NEEDS_CXX20 ON)
    endif()
  endif()
endforeach()
if(GLLM_TORCH_NEEDS_CXX20)
  set(CMAKE_CXX_STANDARD 20)
  message(STATUS "GLLM: LibTorch ${Torch_VERSION} requires C++20: building as C++20")
endif()
# ATen's at::parallel_for is an inline template that forks only in code compiled with OpenMP (this
# LibTorch's threading backend); without it the engine's own kernels would run on one thread.
find_package(OpenMP REQUIRED COMPONENTS CXX)
list(APPEND TORCH_LIBRARIES OpenMP::OpenMP_CXX)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(nlohmann_json 3.2 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
find_library(GLLM_SENTENCEPIECE_TRAIN sentencepiece_train REQUIRED HINTS ${SENTENCEPIECE_LIBRARY_DIRS})
# Compressed corpora for `gllm data prepare` (engine/dataset): gzip through zlib, zstd through libzstd.
find_package(ZLIB REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)

# Torch's imported target carries -D_GLIBCXX_USE_CXX11_ABI; every engine module uses the same flags.
if(TORCH_CXX_FLAGS)
  separate_arguments(_gllm_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
  add_compile_options(${_gllm_torch_flags})
endif()
set(GLLM_TORCH_HAS_CUDA OFF)
if(TARGET torch_cuda OR CUDA_FOUND)
  set(GLLM_TORCH_HAS_CUDA ON)
  add_compile_definitions(GLLM_WITH_CUDA=1)  # CUDA allocator statistics, cuda:LOCAL_RANK per rank
endif()
# NCCL process groups compile only when asked for: CUDA ranks otherwise reduce over Gloo.
option(GLLM_WITH_NCCL
       "Compile the c10d NCCL process group (a CUDA LibTorch and nccl.h on the include path)" OFF)
if(GLLM_WITH_NCCL)
  if(NOT GLLM_TORCH_HAS_CUDA)
    message(FATAL_ERROR "GLLM: GLLM_WITH_NCCL=ON needs a CUDA LibTorch; "
                        "this one (${Torch_VERSION}) is CPU-only")
  endif()
  add_compile_definitions(GLLM_WITH_NCCL=1)
endif()

if(GLLM_BUILD_GUI OR GLLM_BUILD_TESTS)
  find_package(Qt6 6.2 QUIET COMPONENTS Core Gui Widgets Charts Svg Test Concurrent)
  if(NOT Qt6_FOUND)
    find_package(Qt6 6.2 QUIET COMPONENTS Core Test)
  endif()
endif()
if(GLLM_BUILD_GUI AND NOT (TARGET Qt6::Widgets AND TARGET Qt6::Charts))
  if(GLLM_REQUIRE_GUI)
    # Qt6Charts' CMake package needs Qt6OpenGL's (libqt6opengl6-dev), which qt6-charts-dev does not pull in.
    message(FATAL_ERROR "GLLM: Qt 6 Widgets/Charts/Svg not found, so the workbench and its GUI tests cannot "
                        "be built; run scripts/setup.sh (qt6-base-dev qt6-charts-dev qt6-svg-dev "
                        "libqt6opengl6-dev), or configure with -DGLLM_REQUIRE_GUI=OFF for the engine and CLI only")
  endif()
  message(STATUS "GLLM: Qt 6 Widgets/Charts not found — building the engine and CLI only")
  set(GLLM_BUILD_GUI OFF CACHE BOOL "Build the Qt 6 workbench" FORCE)
endif()
if(GLLM_BUILD_TESTS AND NOT TARGET Qt6::Test)
  message(STATUS "GLLM: Qt 6 Test not found — tests are not built")
  set(GLLM_BUILD_TESTS OFF CACHE BOOL "Build tests" FORCE)
endif()

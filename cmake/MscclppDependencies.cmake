# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT

# Every dependency comes from the system (Debian/Ubuntu packages); nothing is downloaded at build time.
# A dependency that a selected option needs and that is missing stops the configure with the package name.

function(mscclpp_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "${what} not found: install the Debian/Ubuntu package '${package}' "
                        "(apt-get install ${package}) or turn the option that needs it off.")
  endif()
endfunction()

find_package(Threads REQUIRED)

find_package(CUDAToolkit REQUIRED)

# The executor reads its JSON plans with nlohmann_json (header only).
find_package(nlohmann_json 3 CONFIG QUIET)
mscclpp_require(nlohmann_json_FOUND "nlohmann_json (for the executor's plan files)" "nlohmann-json3-dev")
if(CUDAToolkit_VERSION VERSION_LESS 12.0)
  message(FATAL_ERROR "CUDA ${CUDAToolkit_VERSION} is too old: libmscclpp needs the CUDA 12.0 toolkit or newer")
endif()

find_path(MSCCLPP_NUMA_INCLUDE_DIR numa.h)
find_library(MSCCLPP_NUMA_LIBRARY numa)
mscclpp_require(MSCCLPP_NUMA_LIBRARY "libnuma" "libnuma-dev")
mscclpp_require(MSCCLPP_NUMA_INCLUDE_DIR "numa.h" "libnuma-dev")

if(MSCCLPP_USE_IB)
  find_path(MSCCLPP_IBVERBS_INCLUDE_DIR infiniband/verbs.h)
  mscclpp_require(MSCCLPP_IBVERBS_INCLUDE_DIR "infiniband/verbs.h (MSCCLPP_USE_IB=ON)" "libibverbs-dev")
endif()

if(MSCCLPP_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)
  endif()
  mscclpp_require(GTest_FOUND "GoogleTest (MSCCLPP_BUILD_TESTS=ON)" "libgtest-dev libgmock-dev")
  find_package(MPI COMPONENTS CXX QUIET)
  mscclpp_require(MPI_CXX_FOUND "MPI (MSCCLPP_BUILD_TESTS=ON, for the multi-process tests)"
                  "libopenmpi-dev openmpi-bin")
endif()

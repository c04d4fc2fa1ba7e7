# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT

# Every option carries the MSCCLPP_ prefix so that the project can be embedded with add_subdirectory.

option(MSCCLPP_BUILD_TESTS "Build unit, multi-process tests and benchmarks" ON)
# libibverbs is dlopen'ed at run time, so the build needs only its headers; a machine without it still
# loads the library and reports IB as unavailable, with the reason.
option(MSCCLPP_USE_IB "Build the ibverbs transport (headers from libibverbs-dev)" ON)
set(MSCCLPP_GPU_ARCHS "90" CACHE STRING
    "CUDA architectures (CMake CUDA_ARCHITECTURES syntax); a plain number embeds SASS and PTX for it")
set(MSCCLPP_SANITIZE "" CACHE STRING
    "Comma list of sanitizers for host code (address,undefined); GPU code is checked with compute-sanitizer")

if(MSCCLPP_SANITIZE)
  string(REPLACE "," ";" _mscclpp_sanitizers "${MSCCLPP_SANITIZE}")
  foreach(_s IN LISTS _mscclpp_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread|leak)$")
      message(FATAL_ERROR "MSCCLPP_SANITIZE: unknown sanitizer '${_s}' (use address, undefined, thread, leak)")
    endif()
  endforeach()
  set(_mscclpp_san_flags "-fsanitize=${MSCCLPP_SANITIZE}" -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_mscclpp_san_flags}>")
  add_link_options(-fsanitize=${MSCCLPP_SANITIZE})
endif()

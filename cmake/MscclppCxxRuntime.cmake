# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT

# One shared C++ runtime per process.
#
# The shared objects of this build (libmscclpp.so, libmscclpp_nccl.so, the Python module) and the programs
# that load them hand C++ objects to each other: exceptions, strings, streams. A shared object linked with
# its own static copy of libstdc++ has its own empty-string representation, exception state and locale
# state, so an exception thrown in libmscclpp.so and caught in the Python module is freed by a runtime that
# did not allocate it ("free(): invalid pointer", then abort), and a copy whose symbols are exported mixes
# with the shared runtime another module loaded first (numpy's does), which crashed the first ostream
# insertion of a number. Some toolchains link libstdc++ statically by default (a GCC installed without its
# shared runtime on the link path). There the build links the shared libstdc++.so.6 that the system's
# loader provides, which, as for any program this compiler builds for this system, must be at least as
# new as the compiler.
#
# The probe links a small shared object the way the build will and reads whether it needs a shared C++
# runtime (libstdc++ or libc++).
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND CMAKE_READELF)
  set(_probe ${CMAKE_BINARY_DIR}/CMakeFiles/MscclppCxxRuntime)
  file(WRITE ${_probe}/probe.cc
       "#include <stdexcept>\n#include <string>\nvoid mscclppProbe(const std::string& s) { throw std::runtime_error(s); }\n")
  separate_arguments(_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS} ${CMAKE_SHARED_LINKER_FLAGS}")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} ${_flags} -shared -fPIC ${_probe}/probe.cc -o ${_probe}/probe.so
                  RESULT_VARIABLE _linked OUTPUT_QUIET ERROR_QUIET)
  execute_process(COMMAND ${CMAKE_READELF} -d ${_probe}/probe.so OUTPUT_VARIABLE _dynamic ERROR_QUIET)
  if(_linked EQUAL 0 AND NOT _dynamic MATCHES "NEEDED[^\n]*lib(stdc|c)\\+\\+")
    find_library(MSCCLPP_SHARED_CXX_RUNTIME NAMES libstdc++.so.6
                 DOC "The shared C++ runtime linked into every binary, where the compiler would link it statically")
    if(NOT MSCCLPP_SHARED_CXX_RUNTIME)
      message(FATAL_ERROR "${CMAKE_CXX_COMPILER} links libstdc++ statically, and no shared libstdc++.so.6 was found: "
                          "shared objects with private C++ runtimes abort when an exception crosses them. Install "
                          "the shared runtime (libstdc++6) or name it with -DMSCCLPP_SHARED_CXX_RUNTIME=<path>.")
    endif()
    message(STATUS "C++ runtime: ${CMAKE_CXX_COMPILER} links libstdc++ statically; linking the shared "
                   "${MSCCLPP_SHARED_CXX_RUNTIME} instead")
    # After every target's own libraries and before the driver's static -lstdc++, so the shared runtime
    # defines every runtime symbol and nothing is taken from the archive.
    string(APPEND CMAKE_CXX_STANDARD_LIBRARIES " ${MSCCLPP_SHARED_CXX_RUNTIME}")
    string(APPEND CMAKE_CUDA_STANDARD_LIBRARIES " ${MSCCLPP_SHARED_CXX_RUNTIME}")
  endif()
endif()

// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The one gate in front of everything that would create or import an NVLink multicast (NVLS) object.
// Creating one can take every GPU of a shared host out of service, so the library refuses unless the
// GPU advertises multicast and the user opted in with MSCCLPP_ENABLE_NVLS=1; and since this build has
// no multicast path, it refuses even then, saying so.

#ifndef MSCCLPP_GPU_NVLS_GATE_HPP_
#define MSCCLPP_GPU_NVLS_GATE_HPP_

#include <string>

namespace mscclpp {

/// Why a multicast object cannot be created: never empty in this build.
std::string nvlsRefusalReason(bool multicastAdvertised, bool enableNvls);

/// Throws Error(InvalidUsage) "NVLS is not supported ...: <reason>" for `operation`, with the reason
/// computed from the current device's capability probe and MSCCLPP_ENABLE_NVLS.
[[noreturn]] void refuseNvls(const std::string& operation);

}  // namespace mscclpp

#endif  // MSCCLPP_GPU_NVLS_GATE_HPP_

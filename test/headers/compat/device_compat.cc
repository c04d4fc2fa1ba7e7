// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/device.hpp>

namespace compat {

#if defined(MSCCLPP_DEVICE_COMPILE)
#if !defined(MSCCLPP_DEVICE_CUDA) && !defined(MSCCLPP_DEVICE_HIP)
#error "a device compilation names its vendor"
#endif
MSCCLPP_DEVICE_INLINE int twice(int x) { return 2 * x; }
__global__ void useDevice(int* x) { *x = twice(*x); }
#else
#if !defined(MSCCLPP_HOST_COMPILE)
#error "a host compilation says so"
#endif
#endif

MSCCLPP_HOST_DEVICE_INLINE int thrice(int x) { return 3 * x; }
MSCCLPP_INLINE int useInline(int x) { return thrice(x); }

}  // namespace compat

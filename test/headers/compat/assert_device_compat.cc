// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/assert_device.hpp>

namespace compat {

#if !defined(MSCCLPP_DEVICE_COMPILE) && defined(MSCCLPP_ASSERT_DEVICE)
#error "device assertions exist in device compilation only"
#endif

#if defined(MSCCLPP_DEVICE_COMPILE)
__global__ void useAssertDevice(int* value) {
  MSCCLPP_ASSERT_DEVICE(*value >= 0, "value must not be negative");
  // Through device.hpp.
  uint32_t copy = static_cast<uint32_t>(*value);
  *value = static_cast<int>(copy);
}
#endif

}  // namespace compat

// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/poll_device.hpp>

namespace compat {

#if !defined(MSCCLPP_DEVICE_COMPILE) && (defined(POLL_MAYBE_JAILBREAK) || defined(OR_POLL_MAYBE_JAILBREAK))
#error "the spin loops exist in device compilation only"
#endif

#if defined(MSCCLPP_DEVICE_COMPILE)
// MSCCL++'s macros carry their own semicolon: written without one, they still compile.
__global__ void usePollDevice(volatile int* flag) {
  POLL_MAYBE_JAILBREAK((*flag == 0), 1000)
  OR_POLL_MAYBE_JAILBREAK((*flag == 1), (*flag == 2), -1)
  POLL_MAYBE_JAILBREAK((*flag == 3), -1);
  // Through assert_device.hpp.
  MSCCLPP_ASSERT_DEVICE(*flag != 4, "flag is 4");
}
#endif

}  // namespace compat

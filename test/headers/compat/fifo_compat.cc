// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/fifo.hpp>

namespace compat {

static_assert(mscclpp::DEFAULT_FIFO_SIZE == 512);

uint64_t useFifo() {
  mscclpp::Fifo fifo;
  mscclpp::Fifo sized(128);
  mscclpp::ProxyTrigger trigger = fifo.poll();
  fifo.pop();
  mscclpp::FifoDeviceHandle handle = sized.deviceHandle();
  return trigger.fst + static_cast<uint64_t>(fifo.size()) + static_cast<uint64_t>(handle.size);
}

}  // namespace compat

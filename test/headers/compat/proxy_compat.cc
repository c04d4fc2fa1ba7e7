// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/proxy.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<mscclpp::ProxyHandler, std::function<mscclpp::ProxyHandlerResult(mscclpp::ProxyTrigger)>>);

void useProxy() {
  mscclpp::Proxy proxy([](mscclpp::ProxyTrigger) { return mscclpp::ProxyHandlerResult::Continue; });
  mscclpp::Proxy withInit([](mscclpp::ProxyTrigger) { return mscclpp::ProxyHandlerResult::Stop; }, [] {}, 256);
  proxy.start();
  withInit.start(true);
  std::shared_ptr<mscclpp::Fifo> fifo = proxy.fifo();
  // Through fifo.hpp.
  (void)fifo->deviceHandle();
  proxy.stop();
}

}  // namespace compat

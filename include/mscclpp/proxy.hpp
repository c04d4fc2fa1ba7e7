// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_PROXY_HPP_
#define MSCCLPP_PROXY_HPP_

#include <functional>
#include <memory>

#include "fifo.hpp"

namespace mscclpp {

enum class ProxyHandlerResult {
  /// Keep serving requests.
  Continue,
  /// Stop the proxy thread after this request.
  Stop,
};

class Proxy;

/// Called by the proxy thread for each request, in FIFO order.
using ProxyHandler = std::function<ProxyHandlerResult(ProxyTrigger)>;

/// A host thread that serves a Fifo: it pops each request the GPU pushes and hands it to the handler.
/// A handler that throws does not stop the thread: the error is logged, the first one is kept, and
/// stop() rethrows it. start/stop from one thread at a time.
class Proxy {
 public:
  /// `threadInit` runs on the proxy thread before it serves (e.g. to pick a GPU or NUMA node).
  Proxy(ProxyHandler handler, std::function<void()> threadInit, int fifoSize = DEFAULT_FIFO_SIZE);
  /// The default thread init makes the GPU current at construction current on the proxy thread and
  /// binds the thread to that GPU's NUMA node (if the platform reports one).
  Proxy(ProxyHandler handler, int fifoSize = DEFAULT_FIFO_SIZE);
  ~Proxy();

  /// Starts the thread; with `blocking`, returns once its init has run. A thread whose init throws
  /// serves nothing and ends; start(true) rethrows the init's error, otherwise stop() does.
  void start(bool blocking = false);

  /// Stops and joins the thread; rethrows the init's error not yet reported, else the first error a
  /// handler threw, if any.
  void stop();

  std::shared_ptr<Fifo> fifo();

 private:
  struct Impl;
  std::unique_ptr<Impl> pimpl_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_PROXY_HPP_

// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "bindings.hpp"

// Errors come first so that every later binding's exceptions translate; the order of the rest only
// matters where a signature names a class bound elsewhere (pybind11 resolves those at call time).
PYBIND11_MODULE(_mscclpp, m) {
  using namespace mscclpp::python;
  m.doc() = "Bindings of the libmscclpp C++ API";
  registerErrors(m);
  registerEnv(m);
  registerCore(m);
  registerFifo(m);
  registerSemaphores(m);
  registerMemoryChannels(m);
  registerPortChannels(m);
  registerGpuUtils(m);
  registerNuma(m);
  registerUtils(m);
  registerExecutor(m);
  registerCollectives(m);
  registerBench(m);
}

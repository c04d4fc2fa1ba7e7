// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_FACTORY_HPP_
#define MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_FACTORY_HPP_

#include "transport/transport_factory.hpp"

namespace mscclpp {

/// GPU to GPU on one host through memory mapped into this process (same process: the pointer itself;
/// another process: an IPC mapping made when the peer's RegisteredMemory is deserialized).
const TransportFactory& cudaIpcTransportFactory();

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_CUDA_IPC_CUDA_IPC_FACTORY_HPP_

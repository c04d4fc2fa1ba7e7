// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_FACTORY_HPP_
#define MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_FACTORY_HPP_

#include "transport/transport_factory.hpp"

namespace mscclpp {

/// TCP between any two processes: host memory on both sides with no GPU involved, or GPU memory staged
/// through pinned host buffers. See docs/transports.md.
const TransportFactory& ethernetTransportFactory();

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_ETHERNET_ETHERNET_FACTORY_HPP_

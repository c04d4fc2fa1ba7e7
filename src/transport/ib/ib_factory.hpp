// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_IB_IB_FACTORY_HPP_
#define MSCCLPP_TRANSPORT_IB_IB_FACTORY_HPP_

#include "transport/transport_factory.hpp"

namespace mscclpp {

/// RDMA over libibverbs (loaded at run time) for IB0..IB7; in a build without MSCCLPP_USE_IB, a
/// factory whose every hook says so. See docs/transports.md.
const TransportFactory& ibTransportFactory();

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_IB_IB_FACTORY_HPP_

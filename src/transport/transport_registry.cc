// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/checks.hpp"
#include "transport/cuda_ipc/cuda_ipc_factory.hpp"
#include "transport/ethernet/ethernet_factory.hpp"
#include "transport/ib/ib_factory.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

const TransportFactory& transportFactory(Transport transport) {
  switch (transport) {
    case Transport::Ethernet:
      return ethernetTransportFactory();
    case Transport::CudaIpc:
      return cudaIpcTransportFactory();
    case Transport::IB0:
    case Transport::IB1:
    case Transport::IB2:
    case Transport::IB3:
    case Transport::IB4:
    case Transport::IB5:
    case Transport::IB6:
    case Transport::IB7:
      return ibTransportFactory();
    case Transport::Unknown:
    case Transport::NumTransports:
      break;
  }
  MSCCLPP_THROW(InvalidUsage, "transport ", transport, " is not available in this build");
}

}  // namespace mscclpp

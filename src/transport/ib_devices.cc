// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The InfiniBand device lookup of <mscclpp/utils.hpp>. This build has no IB transport: there are no
// devices, and a lookup says so instead of answering with an empty name or Transport::Unknown, which
// callers would carry on with.

#include <mscclpp/utils.hpp>

#include "common/checks.hpp"

namespace mscclpp {

int getIBDeviceCount() { return 0; }

std::string getIBDeviceName(Transport ibTransport) {
  MSCCLPP_THROW(InvalidUsage, "getIBDeviceName(", ibTransport,
                "): no InfiniBand device is available (this build of libmscclpp has no IB transport)");
}

Transport getIBTransportByDeviceName(const std::string& ibDeviceName) {
  MSCCLPP_THROW(InvalidUsage, "getIBTransportByDeviceName(\"", ibDeviceName,
                "\"): no InfiniBand device is available (this build of libmscclpp has no IB transport)");
}

}  // namespace mscclpp

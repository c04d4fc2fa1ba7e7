// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/core.hpp>

#include "common/checks.hpp"

namespace mscclpp {

std::string version() {
  return std::to_string(MSCCLPP_MAJOR) + "." + std::to_string(MSCCLPP_MINOR) + "." + std::to_string(MSCCLPP_PATCH);
}

namespace {
// A Transport made from an integer need not name a transport; the set has one bit per transport and none
// for it, and shifting by its value could go past 63 (undefined), so it is refused.
detail::TransportFlagsBase bitOf(Transport transport) {
  auto value = static_cast<long long>(transport);
  MSCCLPP_CHECK_USAGE(value >= 0 && value < static_cast<long long>(Transport::NumTransports), "TransportFlags: ", value,
                      " is not a transport (0 to ", static_cast<int>(Transport::NumTransports) - 1, ")");
  return detail::TransportFlagsBase().set(static_cast<size_t>(value));
}
}  // namespace

TransportFlags::TransportFlags(Transport transport) : detail::TransportFlagsBase(bitOf(transport)) {}

TransportFlags::TransportFlags(detail::TransportFlagsBase bitset) : detail::TransportFlagsBase(bitset) {}

bool TransportFlags::has(Transport transport) const {
  // A value that names no transport is in no set (std::bitset::test would throw std::out_of_range).
  auto value = static_cast<long long>(transport);
  return value >= 0 && value < static_cast<long long>(Transport::NumTransports) &&
         detail::TransportFlagsBase::test(static_cast<size_t>(value));
}
bool TransportFlags::none() const { return detail::TransportFlagsBase::none(); }
bool TransportFlags::any() const { return detail::TransportFlagsBase::any(); }
bool TransportFlags::all() const { return detail::TransportFlagsBase::all(); }
size_t TransportFlags::count() const { return detail::TransportFlagsBase::count(); }

TransportFlags& TransportFlags::operator|=(TransportFlags other) {
  detail::TransportFlagsBase::operator|=(other.toBitset());
  return *this;
}
TransportFlags TransportFlags::operator|(TransportFlags other) const { return TransportFlags(*this) |= other; }
TransportFlags TransportFlags::operator|(Transport transport) const { return *this | TransportFlags(transport); }

TransportFlags& TransportFlags::operator&=(TransportFlags other) {
  detail::TransportFlagsBase::operator&=(other.toBitset());
  return *this;
}
TransportFlags TransportFlags::operator&(TransportFlags other) const { return TransportFlags(*this) &= other; }
TransportFlags TransportFlags::operator&(Transport transport) const { return *this & TransportFlags(transport); }

TransportFlags& TransportFlags::operator^=(TransportFlags other) {
  detail::TransportFlagsBase::operator^=(other.toBitset());
  return *this;
}
TransportFlags TransportFlags::operator^(TransportFlags other) const { return TransportFlags(*this) ^= other; }
TransportFlags TransportFlags::operator^(Transport transport) const { return *this ^ TransportFlags(transport); }

TransportFlags TransportFlags::operator~() const { return TransportFlags(~toBitset()); }

bool TransportFlags::operator==(TransportFlags other) const { return toBitset() == other.toBitset(); }
bool TransportFlags::operator!=(TransportFlags other) const { return !(*this == other); }

detail::TransportFlagsBase TransportFlags::toBitset() const { return *this; }

const TransportFlags NoTransports = TransportFlags();
const TransportFlags AllIBTransports = Transport::IB0 | Transport::IB1 | Transport::IB2 | Transport::IB3 |
                                       Transport::IB4 | Transport::IB5 | Transport::IB6 | Transport::IB7;
const TransportFlags AllTransports = AllIBTransports | Transport::CudaIpc | Transport::Ethernet;

std::ostream& operator<<(std::ostream& os, const Transport& transport) {
  switch (transport) {
    case Transport::Unknown:
      return os << "UNK";
    case Transport::CudaIpc:
      return os << "IPC";
    case Transport::IB0:
    case Transport::IB1:
    case Transport::IB2:
    case Transport::IB3:
    case Transport::IB4:
    case Transport::IB5:
    case Transport::IB6:
    case Transport::IB7:
      return os << "IB" << (static_cast<int>(transport) - static_cast<int>(Transport::IB0));
    case Transport::Ethernet:
      return os << "ETH";
    case Transport::NumTransports:
      return os << "NUM";
  }
  return os << "Transport(" << static_cast<int>(transport) << ")";
}

std::ostream& operator<<(std::ostream& os, const DeviceType& deviceType) {
  switch (deviceType) {
    case DeviceType::Unknown:
      return os << "Unknown";
    case DeviceType::CPU:
      return os << "CPU";
    case DeviceType::GPU:
      return os << "GPU";
  }
  return os << "DeviceType(" << static_cast<int>(deviceType) << ")";
}

std::ostream& operator<<(std::ostream& os, const Device& device) {
  return os << "Device(type=" << device.type << ", id=" << device.id << ")";
}

}  // namespace mscclpp

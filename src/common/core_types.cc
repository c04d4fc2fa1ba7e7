// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/core.hpp>

namespace mscclpp {

std::string version() {
  return std::to_string(MSCCLPP_MAJOR) + "." + std::to_string(MSCCLPP_MINOR) + "." + std::to_string(MSCCLPP_PATCH);
}

TransportFlags::TransportFlags(Transport transport)
    : detail::TransportFlagsBase(1ULL << static_cast<size_t>(transport)) {}

TransportFlags::TransportFlags(detail::TransportFlagsBase bitset) : detail::TransportFlagsBase(bitset) {}

bool TransportFlags::has(Transport transport) const {
  return detail::TransportFlagsBase::test(static_cast<size_t>(transport));
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

// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/registered_memory.hpp"

#include "common/checks.hpp"
#include "common/serialization.hpp"

namespace mscclpp {

TransportFlags readTransportFlags(ByteReader& reader) {
  uint64_t bits = reader.get<uint64_t>("transports");
  const uint64_t valid = ((1ULL << detail::TransportFlagsSize) - 1) & ~1ULL;  // bit 0 is Transport::Unknown
  if (bits & ~valid) reader.fail(concat("transports 0x", std::hex, bits, " has bits of no transport"));
  TransportFlags flags;
  for (size_t t = 1; t < detail::TransportFlagsSize; ++t) {
    if (bits & (1ULL << t)) flags |= static_cast<Transport>(t);
  }
  return flags;
}

RegisteredMemory::RegisteredMemory(std::shared_ptr<Impl> pimpl) : pimpl_(std::move(pimpl)) {}

RegisteredMemory::~RegisteredMemory() = default;

void* RegisteredMemory::data() const { return pimpl_ ? pimpl_->data : nullptr; }

void* RegisteredMemory::originalDataPtr() const { return pimpl_ ? pimpl_->originalDataPtr : nullptr; }

size_t RegisteredMemory::size() const { return pimpl_ ? pimpl_->size : 0; }

TransportFlags RegisteredMemory::transports() const { return pimpl_ ? pimpl_->transports : TransportFlags(); }

TransportMemory* RegisteredMemory::Impl::find(Transport transport) const {
  for (const auto& entry : transportMemories) {
    if (entry->transport() == transport) return entry.get();
  }
  return nullptr;
}

std::vector<char> RegisteredMemory::serialize() const {
  MSCCLPP_CHECK_USAGE(pimpl_, "RegisteredMemory::serialize: empty RegisteredMemory");
  ByteWriter writer;
  writer.put(reinterpret_cast<uint64_t>(pimpl_->originalDataPtr))
      .put<uint64_t>(pimpl_->size)
      .put(pimpl_->hostHash)
      .put(pimpl_->pidHash)
      .put<uint64_t>(pimpl_->transports.toBitset().to_ullong())
      .put<int32_t>(pimpl_->deviceId);
  writer.put<int8_t>(static_cast<int8_t>(pimpl_->transportMemories.size()));
  for (const auto& entry : pimpl_->transportMemories) {
    writer.put<int32_t>(static_cast<int32_t>(entry->transport()));
    entry->serialize(writer);
  }
  return writer.take();
}

void readRegisteredMemoryHeader(ByteReader& reader, RegisteredMemoryAccess::Impl& memory) {
  memory.originalDataPtr = reinterpret_cast<void*>(reader.get<uint64_t>("ptr"));
  memory.size = reader.get<uint64_t>("size");
  memory.hostHash = reader.get<uint64_t>("hostHash");
  memory.pidHash = reader.get<uint64_t>("pidHash");
  memory.transports = readTransportFlags(reader);
  memory.deviceId = reader.get<int32_t>("deviceId");
  if (memory.deviceId < -1) reader.fail(concat("deviceId ", memory.deviceId, " is invalid"));
  if (memory.size != 0 && reinterpret_cast<uintptr_t>(memory.originalDataPtr) > UINTPTR_MAX - memory.size) {
    reader.fail("ptr + size overflows");
  }
}

void checkRange(const RegisteredMemory& memory, uint64_t offset, uint64_t size, const char* what) {
  MSCCLPP_CHECK_USAGE(RegisteredMemoryAccess::impl(memory), what, ": empty RegisteredMemory");
  MSCCLPP_CHECK_USAGE(offset <= memory.size() && size <= memory.size() - offset, what, ": range [", offset, ", ",
                      offset, "+", size, ") exceeds the registered ", memory.size(), " bytes");
}

}  // namespace mscclpp

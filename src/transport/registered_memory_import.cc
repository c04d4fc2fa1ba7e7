// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Reading a peer's RegisteredMemory: the common fields belong to the memory layer, each transport's
// entry to that transport's factory, which is why this half of the wire form lives above the memory
// layer (RegisteredMemory::serialize, which needs no factory, is in memory/registered_memory.cc).

#include <mscclpp/core.hpp>

#include "common/checks.hpp"
#include "memory/local_memory_registry.hpp"
#include "memory/registered_memory.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

std::shared_ptr<TransportMemory> TransportFactory::readMemory(ByteReader& reader, Transport transport,
                                                              const RegisteredMemoryAccess::Impl&) const {
  reader.fail(concat("an entry for ", transport, ", which adds none to registered memory"));
}

RegisteredMemory RegisteredMemory::deserialize(const std::vector<char>& data) {
  ByteReader reader(data, "RegisteredMemory");
  auto impl = std::make_shared<Impl>();
  readRegisteredMemoryHeader(reader, *impl);
  const int entries = reader.get<int8_t>("entry count");
  if (entries < 0 || entries > static_cast<int>(Transport::NumTransports)) {
    reader.fail(concat("entry count ", entries, " is invalid"));
  }
  for (int i = 0; i < entries; ++i) {
    const int32_t value = reader.get<int32_t>("entry transport");
    if (value <= static_cast<int32_t>(Transport::Unknown) || value >= static_cast<int32_t>(Transport::NumTransports)) {
      reader.fail(concat("entry transport ", value, " is not a transport"));
    }
    const Transport transport = static_cast<Transport>(value);
    if (!impl->transports.has(transport)) reader.fail(concat("an entry for ", transport, ", which is not registered"));
    if (impl->find(transport)) reader.fail(concat("a second entry for ", transport));
    // A transport this build lacks throws Error(InvalidUsage), as a malformed entry does.
    impl->transportMemories.push_back(transportFactory(transport).readMemory(reader, transport, *impl));
  }
  reader.expectEnd();

  if (impl->isLocalProcess()) {
    // Bytes that claim this process as their origin could name any address in it: believe them only
    // for memory this process has registered, with that GPU and those transports, and still holds.
    if (!LocalMemoryRegistry::instance().covers(reinterpret_cast<uintptr_t>(impl->originalDataPtr), impl->size,
                                                impl->deviceId, impl->transports)) {
      MSCCLPP_THROW(InvalidUsage, "RegisteredMemory::deserialize: the bytes name ", impl->size, " bytes at ",
                    impl->originalDataPtr, " of this process (", impl->deviceId < 0 ? "host" : "GPU",
                    " memory), "
                    "which no live registration of this process covers with those transports; refused");
    }
    impl->data = impl->originalDataPtr;
  } else {
    // The first transport that maps the memory gives `data` (CudaIpc on the same host); it throws an
    // Error listing every way that was tried when mapping fails.
    for (const auto& entry : impl->transportMemories) {
      if (void* mapped = entry->import(*impl)) {
        impl->data = mapped;
        break;
      }
    }
  }
  return RegisteredMemoryAccess::make(std::move(impl));
}

}  // namespace mscclpp

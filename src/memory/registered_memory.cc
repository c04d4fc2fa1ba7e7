// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "memory/registered_memory.hpp"

#include <mscclpp/gpu_utils.hpp>
#include <optional>

#include "common/checks.hpp"
#include "common/serialization.hpp"

namespace mscclpp {
namespace {

// A serialized RegisteredMemory carries at most one entry per transport.
constexpr int8_t kMaxTransportEntries = static_cast<int8_t>(Transport::NumTransports);

}  // namespace

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

std::vector<char> RegisteredMemory::serialize() const {
  MSCCLPP_CHECK_USAGE(pimpl_, "RegisteredMemory::serialize: empty RegisteredMemory");
  ByteWriter writer;
  writer.put(reinterpret_cast<uint64_t>(pimpl_->originalDataPtr))
      .put<uint64_t>(pimpl_->size)
      .put(pimpl_->hostHash)
      .put(pimpl_->pidHash)
      .put<uint64_t>(pimpl_->transports.toBitset().to_ullong())
      .put<int32_t>(pimpl_->deviceId);
  // Transports that need per-transport data add an entry here; Ethernet and host memory need none.
  writer.put<int8_t>(pimpl_->ipcExport ? 1 : 0);
  if (pimpl_->ipcExport) {
    writer.put<int32_t>(static_cast<int32_t>(Transport::CudaIpc));
    writeGpuIpcMemHandle(writer, pimpl_->ipcExport->handle());
  }
  return writer.take();
}

RegisteredMemory RegisteredMemory::deserialize(const std::vector<char>& data) {
  ByteReader reader(data, "RegisteredMemory");
  auto impl = std::make_shared<Impl>();
  impl->originalDataPtr = reinterpret_cast<void*>(reader.get<uint64_t>("ptr"));
  impl->size = reader.get<uint64_t>("size");
  impl->hostHash = reader.get<uint64_t>("hostHash");
  impl->pidHash = reader.get<uint64_t>("pidHash");
  impl->transports = readTransportFlags(reader);
  impl->deviceId = reader.get<int32_t>("deviceId");
  if (impl->deviceId < -1) reader.fail(concat("deviceId ", impl->deviceId, " is invalid"));
  int8_t entries = reader.get<int8_t>("entry count");
  if (entries < 0 || entries > kMaxTransportEntries) reader.fail(concat("entry count ", int(entries), " is invalid"));
  std::optional<GpuIpcMemHandle> ipcHandle;
  for (int8_t i = 0; i < entries; ++i) {
    int32_t transport = reader.get<int32_t>("entry transport");
    if (transport != static_cast<int32_t>(Transport::CudaIpc)) {
      reader.fail(concat("an entry for transport ", transport, ": only CudaIpc adds entries"));
    }
    if (!impl->transports.has(Transport::CudaIpc)) reader.fail("a CudaIpc entry for memory not registered for CudaIpc");
    if (ipcHandle) reader.fail("a second CudaIpc entry");
    ipcHandle = readGpuIpcMemHandle(reader);
  }
  reader.expectEnd();
  if (impl->size != 0 && reinterpret_cast<uintptr_t>(impl->originalDataPtr) > UINTPTR_MAX - impl->size) {
    reader.fail("ptr + size overflows");
  }
  if (ipcHandle) {
    if (ipcHandle->hostHash != impl->hostHash || ipcHandle->processHash != impl->pidHash) {
      reader.fail("the CudaIpc handle names another process than the memory");
    }
    if (impl->size > ipcHandle->baseSize - ipcHandle->offsetFromBase) {
      reader.fail(concat(impl->size, " bytes at offset ", ipcHandle->offsetFromBase,
                         " do not fit the CudaIpc handle's allocation of ", ipcHandle->baseSize, " bytes"));
    }
  }

  if (impl->isLocalProcess()) {
    impl->data = impl->originalDataPtr;
  } else if (ipcHandle && impl->isLocalHost()) {
    // Maps the peer's memory (once per remote allocation, through the import cache) or throws an
    // Error listing every way that was tried.
    impl->ipcImport = GpuIpcMem::open(*ipcHandle);
    impl->data = impl->ipcImport->data();
  }
  return RegisteredMemory(std::move(impl));
}

void checkRange(const RegisteredMemory& memory, uint64_t offset, uint64_t size, const char* what) {
  MSCCLPP_CHECK_USAGE(RegisteredMemoryAccess::impl(memory), what, ": empty RegisteredMemory");
  MSCCLPP_CHECK_USAGE(offset <= memory.size() && size <= memory.size() - offset, what, ": range [", offset, ", ",
                      offset, "+", size, ") exceeds the registered ", memory.size(), " bytes");
}

}  // namespace mscclpp

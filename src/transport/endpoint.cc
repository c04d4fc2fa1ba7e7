// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/checks.hpp"
#include "transport/endpoint_impl.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

Endpoint::Endpoint(std::shared_ptr<Impl> pimpl) : pimpl_(std::move(pimpl)) {}

namespace {
const EndpointAccess::Impl& checked(const std::shared_ptr<EndpointAccess::Impl>& impl) {
  if (!impl) MSCCLPP_THROW(InvalidUsage, "empty Endpoint (default-constructed)");
  return *impl;
}
}  // namespace

const EndpointConfig& Endpoint::config() const { return checked(pimpl_).config; }
Transport Endpoint::transport() const { return checked(pimpl_).config.transport; }
const Device& Endpoint::device() const { return checked(pimpl_).config.device; }
uint64_t Endpoint::hostHash() const { return checked(pimpl_).hostHash; }
uint64_t Endpoint::pidHash() const { return checked(pimpl_).pidHash; }
int Endpoint::maxWriteQueueSize() const { return checked(pimpl_).config.maxWriteQueueSize; }

std::vector<char> Endpoint::serialize() const {
  const Impl& impl = checked(pimpl_);
  ByteWriter writer;
  writer.put(impl.config).put(impl.hostHash).put(impl.pidHash);
  impl.transportData->serialize(writer);
  return writer.take();
}

Endpoint Endpoint::deserialize(const std::vector<char>& data) {
  ByteReader reader(data, "Endpoint");
  auto impl = std::make_shared<Impl>();
  impl->config = reader.get<EndpointConfig>("config");
  const EndpointConfig& config = impl->config;
  if (config.transport <= Transport::Unknown || config.transport >= Transport::NumTransports) {
    reader.fail(concat("transport ", static_cast<int>(config.transport), " is invalid"));
  }
  if (config.device.type < DeviceType::Unknown || config.device.type > DeviceType::GPU) {
    reader.fail(concat("device type ", static_cast<int>(config.device.type), " is invalid"));
  }
  if (config.device.id < -1) reader.fail(concat("device id ", config.device.id, " is invalid"));
  impl->hostHash = reader.get<uint64_t>("hostHash");
  impl->pidHash = reader.get<uint64_t>("pidHash");
  impl->transportData = transportFactory(config.transport).readEndpoint(reader, config);
  reader.expectEnd();
  return Endpoint(std::move(impl));
}

}  // namespace mscclpp

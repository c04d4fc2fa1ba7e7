// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_IB_IB_OBJECTS_HPP_
#define MSCCLPP_TRANSPORT_IB_IB_OBJECTS_HPP_

#include <memory>
#include <mutex>

#include "transport/ib/ib_device.hpp"
#include "transport/ib/ib_qp.hpp"
#include "transport/transport_factory.hpp"

namespace mscclpp {

/// IB's per-Context state for one IBx: the open device, shared by its endpoints and memory regions.
class IbContextState : public TransportContextState {
 public:
  explicit IbContextState(Transport transport) : transport_(transport) {}
  /// Opened on first use.
  std::shared_ptr<IbDevice> device();

 private:
  Transport transport_;
  std::mutex mutex_;
  std::shared_ptr<IbDevice> device_;
};

/// IB's part of a RegisteredMemory: the region's address and rkey, and for memory of this process the
/// region itself.
class IbMemory : public TransportMemory {
 public:
  IbMemory(Transport transport, std::unique_ptr<IbMr> mr)
      : transport_(transport), addr_(mr->addr()), rkey_(mr->rkey()), mr_(std::move(mr)) {}
  IbMemory(Transport transport, uint64_t addr, uint32_t rkey) : transport_(transport), addr_(addr), rkey_(rkey) {}

  Transport transport() const override { return transport_; }
  void serialize(ByteWriter& writer) const override { writer.put(addr_).put(rkey_); }

  uint64_t addr() const { return addr_; }
  uint32_t rkey() const { return rkey_; }
  /// nullptr for a peer's memory.
  const IbMr* mr() const { return mr_.get(); }

 private:
  Transport transport_;
  uint64_t addr_;
  uint32_t rkey_;
  std::unique_ptr<IbMr> mr_;
};

/// IB's part of an Endpoint: a queue pair (local) or the peer's description of one (remote).
class IbEndpoint : public TransportEndpoint {
 public:
  explicit IbEndpoint(std::shared_ptr<IbQp> qp) : qp_(std::move(qp)), info_(qp_->info()) {}
  explicit IbEndpoint(const IbQpInfo& info) : info_(info) {}

  void serialize(ByteWriter& writer) const override { writer.put(info_); }
  const std::shared_ptr<IbQp>& qp() const { return qp_; }
  const IbQpInfo& info() const { return info_; }

 private:
  std::shared_ptr<IbQp> qp_;
  IbQpInfo info_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_IB_IB_OBJECTS_HPP_

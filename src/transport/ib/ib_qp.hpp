// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_IB_IB_QP_HPP_
#define MSCCLPP_TRANSPORT_IB_IB_QP_HPP_

#include <cstdint>
#include <memory>
#include <mscclpp/core.hpp>

#include "transport/ib/ib_device.hpp"

namespace mscclpp {

/// What a peer needs to connect its queue pair to this one; crosses processes raw (in the endpoint).
struct IbQpInfo {
  uint16_t lid;
  uint8_t linkLayer;  // IBV_LINK_LAYER_*
  uint8_t isGrh;      // address through the GID (always on RoCE)
  uint32_t qpn;
  uint64_t subnetPrefix;
  uint64_t interfaceId;
  int32_t mtu;      // ibv_mtu of the port
  uint8_t atomics;  // the device can execute RDMA atomics
  uint8_t reserved[3];
};
static_assert(sizeof(IbQpInfo) == 32, "IbQpInfo crosses processes raw");

/// A reliable-connected queue pair with its send and receive completion queues, made in INIT state on
/// the port chosen from the endpoint's configuration (`config.port`, -1 for the first active one).
class IbQp {
 public:
  /// Checks `config` (sizes positive and within the device's limits, port active, GID present on RoCE).
  IbQp(std::shared_ptr<IbDevice> device, const EndpointConfig::Ib& config);
  ~IbQp();
  IbQp(const IbQp&) = delete;
  IbQp& operator=(const IbQp&) = delete;

  const IbQpInfo& info() const { return info_; }
  const EndpointConfig::Ib& config() const { return config_; }
  const std::shared_ptr<IbDevice>& device() const { return device_; }
  /// The largest message the port carries; longer writes are split.
  uint64_t maxMessageBytes() const { return maxMsg_; }

  bool connected() const { return connected_; }
  /// INIT -> RTR -> RTS towards `remote`. Once only.
  void connect(const IbQpInfo& remote);

  /// Posts a chain of work requests; throws IbError when the provider refuses it.
  void postSend(ibv_send_wr* first);
  void postRecv(ibv_recv_wr* first);
  /// Polls at most `max` completions; throws IbError when the CQ cannot be polled.
  int pollSend(ibv_wc* wcs, int max);
  int pollRecv(ibv_wc* wcs, int max);

 private:
  std::shared_ptr<IbDevice> device_;
  EndpointConfig::Ib config_;
  int port_ = 0;
  ibv_mtu activeMtu_ = IBV_MTU_1024;
  uint64_t maxMsg_ = 0;
  ibv_cq* sendCq_ = nullptr;
  ibv_cq* recvCq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  IbQpInfo info_{};
  bool connected_ = false;
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_IB_IB_QP_HPP_

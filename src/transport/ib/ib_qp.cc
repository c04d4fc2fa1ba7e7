// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Built with MSCCLPP_USE_IB only; ib_unavailable.cc stands in for it otherwise.
#if defined(MSCCLPP_USE_IB)

#include "transport/ib/ib_qp.hpp"

#include <algorithm>

#include "common/checks.hpp"
#include "transport/ib/ibverbs.hpp"

namespace mscclpp {
namespace {

// RC timing as deployed InfiniBand fabrics expect: ~1 s ACK timeout (4.096 us * 2^18), 7 transport
// retries, infinite RNR retries with a 0.96 ms delay.
constexpr uint8_t kAckTimeout = 18;
constexpr uint8_t kRetryCount = 7;
constexpr uint8_t kRnrRetry = 7;
constexpr uint8_t kMinRnrTimer = 0x12;
// One outstanding RDMA atomic or read at a time in each direction is all this transport issues.
constexpr uint8_t kRdAtomic = 1;
constexpr uint64_t kMaxMessageCap = 1ULL << 30;

void checkPositive(int value, const char* field) {
  MSCCLPP_CHECK_USAGE(value > 0, "EndpointConfig::Ib::", field, " must be positive, not ", value);
}

}  // namespace

IbQp::IbQp(std::shared_ptr<IbDevice> device, const EndpointConfig::Ib& config)
    : device_(std::move(device)), config_(config) {
  const IbvTable& t = ibv();
  const ibv_device_attr& dev = device_->attr();
  checkPositive(config.maxCqSize, "maxCqSize");
  checkPositive(config.maxCqPollNum, "maxCqPollNum");
  checkPositive(config.maxSendWr, "maxSendWr");
  checkPositive(config.maxWrPerSend, "maxWrPerSend");
  MSCCLPP_CHECK_USAGE(config.maxCqSize <= dev.max_cqe, "EndpointConfig::Ib::maxCqSize ", config.maxCqSize,
                      " exceeds the ", dev.max_cqe, " entries a CQ of ", device_->name(), " can hold");
  MSCCLPP_CHECK_USAGE(config.maxSendWr <= dev.max_qp_wr, "EndpointConfig::Ib::maxSendWr ", config.maxSendWr,
                      " exceeds the ", dev.max_qp_wr, " work requests a QP of ", device_->name(), " can hold");
  MSCCLPP_CHECK_USAGE(config.maxWrPerSend <= config.maxSendWr, "EndpointConfig::Ib::maxWrPerSend ", config.maxWrPerSend,
                      " exceeds maxSendWr ", config.maxSendWr);

  ibv_port_attr portAttr{};
  port_ = device_->selectPort(config.port, &portAttr);
  activeMtu_ = portAttr.active_mtu;
  maxMsg_ = std::min<uint64_t>(portAttr.max_msg_sz, kMaxMessageCap);
  info_.lid = portAttr.lid;
  info_.linkLayer = portAttr.link_layer;
  info_.isGrh = portAttr.link_layer == IBV_LINK_LAYER_ETHERNET ? 1 : 0;
  info_.mtu = portAttr.active_mtu;
  info_.atomics = device_->hasAtomics() ? 1 : 0;
  if (info_.isGrh) {
    ibv_gid gid = device_->gid(port_, config.gidIndex, portAttr);
    info_.subnetPrefix = gid.global.subnet_prefix;
    info_.interfaceId = gid.global.interface_id;
  }

  sendCq_ = t.createCq(device_->context(), config.maxCqSize, nullptr, nullptr, 0);
  if (sendCq_ == nullptr) throw IbError(concat("ibv_create_cq(", config.maxCqSize, ") on ", device_->name()), errno);
  recvCq_ = t.createCq(device_->context(), config.maxCqSize, nullptr, nullptr, 0);
  if (recvCq_ == nullptr) {
    int err = errno;
    t.destroyCq(sendCq_);
    throw IbError(concat("ibv_create_cq(", config.maxCqSize, ") on ", device_->name()), err);
  }
  ibv_qp_init_attr init{};
  init.send_cq = sendCq_;
  init.recv_cq = recvCq_;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = config.maxSendWr;
  // Receives are posted only when updates travel as writes with immediate (no atomics on a side).
  init.cap.max_recv_wr = std::min(config.maxCqSize, dev.max_qp_wr);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = 0;
  qp_ = t.createQp(device_->pd(), &init);
  if (qp_ == nullptr) {
    int err = errno;
    t.destroyCq(recvCq_);
    t.destroyCq(sendCq_);
    throw IbError(concat("ibv_create_qp on ", device_->name(), " port ", port_), err);
  }
  info_.qpn = qp_->qp_num;

  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = static_cast<uint8_t>(port_);
  attr.qp_access_flags =
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  if (int rc = t.modifyQp(qp_, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS); rc != 0) {
    t.destroyQp(qp_);
    t.destroyCq(recvCq_);
    t.destroyCq(sendCq_);
    throw IbError(concat("ibv_modify_qp to INIT on ", device_->name(), " port ", port_), rc);
  }
}

IbQp::~IbQp() {
  const IbvTable& t = ibv();
  const std::string& name = device_->name();
  if (int rc = t.destroyQp(qp_); rc != 0) LOG_WARN(CONN, "ibv_destroy_qp on ", name, ": ", errnoName(rc));
  if (int rc = t.destroyCq(recvCq_); rc != 0) LOG_WARN(CONN, "ibv_destroy_cq on ", name, ": ", errnoName(rc));
  if (int rc = t.destroyCq(sendCq_); rc != 0) LOG_WARN(CONN, "ibv_destroy_cq on ", name, ": ", errnoName(rc));
}

void IbQp::connect(const IbQpInfo& remote) {
  MSCCLPP_CHECK_USAGE(!connected_, "this IB endpoint is already connected; make one endpoint per connection");
  MSCCLPP_CHECK_USAGE(remote.linkLayer == info_.linkLayer, "IB connect: the local port's link layer (",
                      static_cast<int>(info_.linkLayer), ") differs from the remote one's (",
                      static_cast<int>(remote.linkLayer), ")");
  const IbvTable& t = ibv();
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min<int>(activeMtu_, remote.mtu));
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = 0;
  attr.max_dest_rd_atomic = kRdAtomic;
  attr.min_rnr_timer = kMinRnrTimer;
  attr.ah_attr.dlid = remote.lid;
  attr.ah_attr.sl = 0;
  attr.ah_attr.src_path_bits = 0;
  attr.ah_attr.port_num = static_cast<uint8_t>(port_);
  if (remote.isGrh) {
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid.global.subnet_prefix = remote.subnetPrefix;
    attr.ah_attr.grh.dgid.global.interface_id = remote.interfaceId;
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(config_.gidIndex);
    attr.ah_attr.grh.hop_limit = 255;
    attr.ah_attr.grh.flow_label = 0;
    attr.ah_attr.grh.traffic_class = 0;
  }
  if (int rc = t.modifyQp(qp_, &attr,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    throw IbError(concat("ibv_modify_qp to RTR (remote QP ", remote.qpn, ") on ", device_->name()), rc);
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = kAckTimeout;
  attr.retry_cnt = kRetryCount;
  attr.rnr_retry = kRnrRetry;
  attr.sq_psn = 0;
  attr.max_rd_atomic = kRdAtomic;
  if (int rc = t.modifyQp(qp_, &attr,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                              IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0) {
    throw IbError(concat("ibv_modify_qp to RTS on ", device_->name()), rc);
  }
  connected_ = true;
}

void IbQp::postSend(ibv_send_wr* first) {
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv().postSend(qp_, first, &bad); rc != 0) {
    throw IbError(concat("ibv_post_send on ", device_->name(), " QP ", info_.qpn), rc);
  }
}

void IbQp::postRecv(ibv_recv_wr* first) {
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv().postRecv(qp_, first, &bad); rc != 0) {
    throw IbError(concat("ibv_post_recv on ", device_->name(), " QP ", info_.qpn), rc);
  }
}

int IbQp::pollSend(ibv_wc* wcs, int max) {
  int n = ibv().pollCq(sendCq_, max, wcs);
  if (n < 0) throw IbError(concat("ibv_poll_cq (send) on ", device_->name(), " QP ", info_.qpn), EIO);
  return n;
}

int IbQp::pollRecv(ibv_wc* wcs, int max) {
  int n = ibv().pollCq(recvCq_, max, wcs);
  if (n < 0) throw IbError(concat("ibv_poll_cq (recv) on ", device_->name(), " QP ", info_.qpn), EIO);
  return n;
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_USE_IB)

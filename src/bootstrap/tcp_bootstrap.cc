// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// TcpBootstrap: the ranks find each other through rank 0, form a ring, and then talk over direct
// connections opened on demand. The public class forwards to TcpBootstrap::Impl
// (tcp_bootstrap_impl.hpp, which lists the files that implement it); docs/bootstrap.md describes
// the protocol and the failure semantics.

#include <mscclpp/core.hpp>

#include "bootstrap/tcp_bootstrap_impl.hpp"
#include "common/checks.hpp"

namespace mscclpp {

using namespace tcp_bootstrap;

TcpBootstrap::TcpBootstrap(int rank, int nRanks) {
  MSCCLPP_CHECK_USAGE(nRanks >= 1, "TcpBootstrap: nRanks must be at least 1, got ", nRanks);
  MSCCLPP_CHECK_USAGE(nRanks <= kMaxRanks, "TcpBootstrap: nRanks ", nRanks, " is above the limit of ", kMaxRanks,
                      " ranks per bootstrap");
  MSCCLPP_CHECK_USAGE(rank >= 0 && rank < nRanks, "TcpBootstrap: rank ", rank, " is outside 0..", nRanks - 1);
  pimpl_ = std::make_unique<Impl>(rank, nRanks);
}

TcpBootstrap::~TcpBootstrap() = default;

UniqueId TcpBootstrap::getUniqueId() const {
  MSCCLPP_CHECK_USAGE(pimpl_->started_, "TcpBootstrap::getUniqueId on rank ", pimpl_->rank_,
                      ": no id yet (call initialize first; createUniqueId makes a new one)");
  return pimpl_->id_;
}

void TcpBootstrap::initialize(UniqueId uniqueId, int64_t timeoutSec) { pimpl_->initialize(uniqueId, "", timeoutSec); }

void TcpBootstrap::initialize(const std::string& ifIpPortTrio, int64_t timeoutSec) {
  std::string ifname;
  SocketAddress root = parseSocketAddress(ifIpPortTrio, &ifname);
  MSCCLPP_CHECK_USAGE(socketAddressPort(root) != 0, "TcpBootstrap::initialize: '", ifIpPortTrio,
                      "' has port 0; rank 0 must listen at a known port");
  pimpl_->initialize(encodeUniqueId(kStringIdMagic, root), ifname, timeoutSec);
}

int TcpBootstrap::getRank() const { return pimpl_->rank_; }
int TcpBootstrap::getNranks() const { return pimpl_->nRanks_; }
int TcpBootstrap::getNranksPerNode() const {
  pimpl_->checkReady("getNranksPerNode");
  return pimpl_->nRanksPerNode_;
}
void TcpBootstrap::send(void* data, int size, int peer, int tag) { pimpl_->send(data, size, peer, tag); }
void TcpBootstrap::recv(void* data, int size, int peer, int tag) { pimpl_->recv(data, size, peer, tag); }
void TcpBootstrap::allGather(void* allData, int size) { pimpl_->allGather(allData, size); }
void TcpBootstrap::broadcast(void* data, int size, int root) { pimpl_->broadcast(data, size, root); }
void TcpBootstrap::barrier() {
  std::vector<int32_t> all(pimpl_->nRanks_);
  pimpl_->allGather(all.data(), sizeof(int32_t));
}

}  // namespace mscclpp

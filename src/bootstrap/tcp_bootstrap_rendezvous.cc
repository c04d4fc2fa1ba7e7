// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// How the ranks find each other: the UniqueId, the check-in of every rank at rank 0, and the ring.
// docs/bootstrap.md ("Initialization") describes the protocol.

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <mscclpp/env.hpp>
#include <optional>

#include "bootstrap/tcp_bootstrap_impl.hpp"
#include "common/checks.hpp"
#include "common/identity.hpp"

namespace mscclpp {

using namespace tcp_bootstrap;

namespace {

void decodeUniqueId(const UniqueId& id, uint64_t* magic, SocketAddress* address) {
  std::memcpy(magic, id.data(), sizeof(*magic));
  std::memcpy(address, id.data() + sizeof(*magic), sizeof(*address));
}

uint64_t randomMagic() {
  // The string form's fixed magic must not be chosen at random too.
  for (;;) {
    uint64_t magic = randomU64();
    if (magic != kStringIdMagic) return magic;
  }
}

// Ports reserved by createUniqueId, keyed by magic, until rank 0 of this process adopts one. The
// socket is bound but not listening: rank 0 in another process can still bind the address again.
std::mutex& reservedMutex() {
  static std::mutex m;
  return m;
}
std::map<uint64_t, TcpListener>& reservedListeners() {
  static auto* table = new std::map<uint64_t, TcpListener>();  // outlives static destructors
  return *table;
}

}  // namespace

namespace tcp_bootstrap {

UniqueId encodeUniqueId(uint64_t magic, const SocketAddress& address) {
  UniqueId id{};
  std::memcpy(id.data(), &magic, sizeof(magic));
  std::memcpy(id.data() + sizeof(magic), &address, sizeof(address));
  return id;
}

}  // namespace tcp_bootstrap

UniqueId TcpBootstrap::createUniqueId() {
  uint64_t magic = randomMagic();
  TcpListener reserved = TcpListener::bindOnly(localInterfaceAddress());
  UniqueId id = encodeUniqueId(magic, reserved.address());
  std::lock_guard<std::mutex> lock(reservedMutex());
  reservedListeners()[magic] = std::move(reserved);
  return id;
}

void TcpBootstrap::Impl::initialize(const UniqueId& id, const std::string& ifname, int64_t timeoutSec) {
  MSCCLPP_CHECK_USAGE(!started_, "TcpBootstrap::initialize on rank ", rank_, ": already called");
  started_ = true;
  timeoutSec_ = timeoutSec == TcpBootstrap::DefaultTimeoutSec ? env()->bootstrapTimeoutSec : timeoutSec;
  const Deadline deadline = Deadline::fromTimeoutSec(timeoutSec_);
  decodeUniqueId(id, &magic_, &rootAddress_);
  MSCCLPP_CHECK_USAGE(magic_ != 0 && socketAddressLength(rootAddress_) != 0, "TcpBootstrap::initialize on rank ", rank_,
                      ": the UniqueId is empty (made by createUniqueId on one rank and passed to all?)");
  id_ = id;
  departed_.assign(nRanks_, false);

  const SocketAddress local = ifname.empty() ? localInterfaceAddress() : interfaceAddress(ifname);
  listener_ = TcpListener::listen(local);
  const SocketAddress ownListen = listener_.address();

  // Rank 0 claims the root address first, so ranks that check in early are queued by the kernel.
  TcpListener rootListener;
  if (rank_ == 0) {
    {
      std::lock_guard<std::mutex> lock(reservedMutex());
      auto it = reservedListeners().find(magic_);
      if (it != reservedListeners().end() && it->second.address() == rootAddress_) {
        rootListener = std::move(it->second);
        reservedListeners().erase(it);
      }
    }
    if (!rootListener.valid()) rootListener = TcpListener::bindOnly(rootAddress_);
    rootListener.startListening(std::max(128, nRanks_));
  }

  startService();
  try {
    SocketAddress successor = rank_ == 0 ? runRoot(rootListener, ownListen, deadline) : checkIn(ownListen, deadline);
    rootListener = TcpListener();  // strays to the root address are refused from now on

    peers_.assign(nRanks_, PeerInfo{});
    peers_[rank_] = PeerInfo{ownListen, getHostHash()};
    if (nRanks_ > 1) {
      formRing(successor, deadline);
      std::vector<char> all(size_t(nRanks_) * kPeerInfoBytes);
      std::memcpy(all.data() + size_t(rank_) * kPeerInfoBytes, &peers_[rank_].listen, sizeof(SocketAddress));
      std::memcpy(all.data() + size_t(rank_) * kPeerInfoBytes + sizeof(SocketAddress), &peers_[rank_].hostHash, 8);
      std::lock_guard<std::mutex> ring(ringMutex_);
      for (int step = 0; step < nRanks_ - 1; ++step) {
        int sendSlot = (rank_ - step + nRanks_) % nRanks_;
        int recvSlot = (rank_ - step - 1 + nRanks_) % nRanks_;
        ringExchange(all.data() + size_t(sendSlot) * kPeerInfoBytes, all.data() + size_t(recvSlot) * kPeerInfoBytes,
                     kPeerInfoBytes, deadline, "the address exchange of initialize");
      }
      for (int r = 0; r < nRanks_; ++r) {
        ByteReader reader(all.data() + size_t(r) * kPeerInfoBytes, kPeerInfoBytes, "bootstrap peer info");
        peers_[r].listen = reader.get<SocketAddress>("listen address");
        peers_[r].hostHash = reader.get<uint64_t>("host hash");
      }
    }
  } catch (const Error& e) {
    // The messages are complete already (they name this rank and what it waited for); make sure the
    // other ranks hear of the failure too.
    abort(plainMessage(e));
    throw;
  } catch (const std::exception& e) {
    abort(plainMessage(e));
    throw;
  }

  nRanksPerNode_ = static_cast<int>(std::count_if(
      peers_.begin(), peers_.end(), [&](const PeerInfo& p) { return p.hostHash == peers_[rank_].hostHash; }));
  initialized_ = true;
  logger().setTag("rank " + std::to_string(rank_));
  LOG_INFO(NET, "bootstrap ready: rank ", rank_, " of ", nRanks_, ", listening at ", toString(ownListen), ", ",
           nRanksPerNode_, " rank(s) on this host, timeout ", timeoutSec_ < 0 ? "none" : secondsText(timeoutSec_));
}

SocketAddress TcpBootstrap::Impl::runRoot(TcpListener& rootListener, const SocketAddress& ownListen,
                                          const Deadline& deadline) {
  struct Joined {
    std::shared_ptr<TcpSocket> socket;  // null for rank 0 itself
    SocketAddress listen;
    SocketAddress from;
  };
  std::vector<std::optional<Joined>> joined(nRanks_);
  joined[0] = Joined{nullptr, ownListen, ownListen};
  int count = 1;
  const std::string where = toString(rootListener.address());
  // Rank 0 chooses the job's secret; the others learn it in the answer to their check-in.
  const uint64_t secret = randomU64();
  setSecret(secret);

  auto reply = [&](TcpSocket& socket, ReplyStatus status, const std::string& text, const SocketAddress* successor) {
    ByteWriter w;
    w.put(static_cast<int32_t>(status));
    if (successor) {
      w.put(*successor).put(secret);
    } else {
      std::string clipped = text.substr(0, kMaxReplyText);
      w.put(static_cast<uint32_t>(clipped.size())).putBytes(clipped.data(), clipped.size());
    }
    // The peer is waiting for exactly this; a short bound keeps a dead peer from delaying the others.
    socket.sendAll(w.bytes().data(), w.bytes().size(), Deadline::after(std::chrono::seconds(1)).min(deadline));
  };
  // Rejects the group: the offenders learn why, every other rank that checked in learns that rank 0
  // gave up, and rank 0 throws.
  auto rejectGroup = [&](ErrorCode code, const std::string& message,
                         std::vector<std::shared_ptr<TcpSocket>> offenders) {
    for (auto& j : joined) {
      if (!j || !j->socket) continue;
      bool offender = std::find(offenders.begin(), offenders.end(), j->socket) != offenders.end();
      try {
        reply(*j->socket, offender ? ReplyStatus::Rejected : ReplyStatus::GroupAborted, message, nullptr);
      } catch (const std::exception&) {
        // That rank is gone already; the others still deserve their answer.
      }
      offenders.erase(std::remove(offenders.begin(), offenders.end(), j->socket), offenders.end());
    }
    for (auto& s : offenders) {
      try {
        reply(*s, ReplyStatus::Rejected, message, nullptr);
      } catch (const std::exception&) {
      }
    }
    throw Error(message, code);
  };

  HandshakeAcceptor::Options options;
  options.maxPending = kMaxPendingConnections;
  options.helloTimeout = kHandshakeTimeout;
  options.what = "check-in";
  options.firstRead = sizeof(uint64_t);
  options.judge = [&](const std::vector<char>& bytes) {
    if (bytes.size() == sizeof(uint64_t)) {
      uint64_t magic;
      std::memcpy(&magic, bytes.data(), sizeof(magic));
      if (magic != magic_) return HandshakeAcceptor::Verdict::reject("wrong magic (not a rank of this job)");
      return HandshakeAcceptor::Verdict::needMore(kHandshakeBytes);
    }
    if (bytes.size() == kHandshakeBytes) {
      Handshake h = decodeHandshake(bytes.data());
      if (h.kind != static_cast<uint32_t>(ConnKind::CheckIn)) {
        return HandshakeAcceptor::Verdict::reject(
            concat("a ", kindName(h.kind), " connection sent to the root address"));
      }
      return HandshakeAcceptor::Verdict::needMore(kHandshakeBytes + kCheckInBytes);
    }
    // No rank of ours can announce a count outside this range (its constructor refuses it): such a
    // check-in is a stranger's, dropped like one, and the job goes on.
    ByteReader reader(bytes.data() + kHandshakeBytes, kCheckInBytes, "bootstrap check-in");
    const int32_t theirN = reader.get<int32_t>("nRanks");
    if (theirN < 1 || theirN > kMaxRanks) {
      return HandshakeAcceptor::Verdict::reject(
          concat("it announces nRanks ", theirN, ", outside 1..", kMaxRanks, " (not a rank of any valid job)"));
    }
    return HandshakeAcceptor::Verdict::accept();
  };
  options.onDrop = dropReporter(concat("the root address ", where));
  HandshakeAcceptor acceptor(rootListener.fd(), std::move(options));

  while (count < nRanks_) {
    if (deadline.expired()) {
      std::string missing;
      for (int r = 0; r < nRanks_; ++r) {
        if (!joined[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      rejectGroup(ErrorCode::Timeout,
                  concat("rank 0: timed out after ", secondsText(timeoutSec_), " waiting for ", nRanks_ - count, " of ",
                         nRanks_, " ranks to check in at ", where, " (", count, " checked in; missing: ", missing, ")"),
                  {});
    }
    std::vector<pollfd> fds(acceptor.pollCount());
    acceptor.fillPollFds(fds.data());
    std::vector<int> joinedRanks;
    for (int r = 1; r < nRanks_; ++r) {
      if (joined[r]) {
        fds.push_back({joined[r]->socket->fd(), POLLIN, 0});
        joinedRanks.push_back(r);
      }
    }
    int rc = ::poll(fds.data(), fds.size(), deadline.min(acceptor.nextExpiry()).pollTimeoutMs());
    if (rc < 0) {
      if (errno != EINTR) throw SysError(concat("rank 0: poll() on the root listener ", where, " failed"), errno);
      continue;
    }

    // A rank that checked in and then disconnected has died: nobody can complete the ring without it.
    for (size_t i = 0; i < joinedRanks.size(); ++i) {
      const pollfd& pfd = fds[acceptor.pollCount() + i];
      if (!pfd.revents) continue;
      int r = joinedRanks[i];
      rejectGroup(ErrorCode::Aborted,
                  concat("rank 0: rank ", r, " (", toString(joined[r]->from),
                         ") closed its connection during initialization (it failed, gave up, exited or was killed)"),
                  {});
    }

    for (auto& accepted : acceptor.process(fds.data())) {
      auto socket = std::make_shared<TcpSocket>(std::move(accepted.fd), accepted.peer);
      Handshake h = decodeHandshake(accepted.hello.data());
      ByteReader reader(accepted.hello.data() + kHandshakeBytes, kCheckInBytes, "bootstrap check-in");
      int32_t theirN = reader.get<int32_t>("nRanks");
      SocketAddress listen = reader.get<SocketAddress>("listen address");
      reader.get<uint64_t>("host hash");
      std::string from = toString(socket->peer());
      if (theirN != nRanks_) {
        rejectGroup(ErrorCode::InvalidUsage,
                    concat("rank 0: rank ", h.rank, " (", from, ") joined with nRanks ", theirN,
                           ", but rank 0 has nRanks ", nRanks_, "; every rank must pass the same nRanks"),
                    {socket});
      }
      if (h.rank < 0 || h.rank >= nRanks_) {
        rejectGroup(ErrorCode::InvalidUsage,
                    concat("rank 0: a process at ", from, " checked in as rank ", h.rank, ", outside 0..", nRanks_ - 1),
                    {socket});
      }
      if (joined[h.rank]) {
        std::vector<std::shared_ptr<TcpSocket>> offenders{socket};
        if (joined[h.rank]->socket) offenders.push_back(joined[h.rank]->socket);
        rejectGroup(ErrorCode::InvalidUsage,
                    concat("rank 0: rank ", h.rank, " checked in twice, from ", toString(joined[h.rank]->from),
                           " and from ", from, "; every process must have its own rank"),
                    offenders);
      }
      joined[h.rank] = Joined{socket, listen, socket->peer()};
      ++count;
      LOG_DEBUG(NET, "rank 0: rank ", h.rank, " checked in from ", from, " (", count, " of ", nRanks_, ")");
    }
  }
  acceptor.clear("no complete check-in by the end of initialization");

  for (int r = 1; r < nRanks_; ++r) {
    try {
      reply(*joined[r]->socket, ReplyStatus::Ok, "", &joined[(r + 1) % nRanks_]->listen);
    } catch (const std::exception& e) {
      rejectGroup(ErrorCode::Aborted,
                  concat("rank 0: could not answer rank ", r, " (", toString(joined[r]->from), "): ", plainMessage(e)),
                  {});
    }
  }
  LOG_DEBUG(NET, "rank 0: all ", nRanks_, " ranks checked in at ", where);
  return joined[1 % nRanks_]->listen;
}

SocketAddress TcpBootstrap::Impl::checkIn(const SocketAddress& ownListen, const Deadline& deadline) {
  const std::string root = toString(rootAddress_);
  TcpSocket socket;
  try {
    socket = TcpSocket::connect(rootAddress_, deadline, "check-in");
  } catch (const Error& e) {
    if (e.getErrorCode() != ErrorCode::Timeout) throw;
    MSCCLPP_THROW(Timeout, "rank ", rank_, ": timed out after ", secondsText(timeoutSec_),
                  " waiting for rank 0 to listen at ", root, " (", plainMessage(e), ")");
  } catch (const SysError& e) {
    throw SysError(concat("rank ", rank_, ": connecting to rank 0 at ", root, " failed"), e.getErrorCode());
  }
  ByteWriter w;
  w.putBytes(encodeHandshake({magic_, static_cast<uint32_t>(ConnKind::CheckIn), rank_, 0}).data(), kHandshakeBytes);
  w.put(static_cast<int32_t>(nRanks_)).put(ownListen).put(getHostHash());

  int32_t status = 0;
  try {
    socket.sendAll(w.bytes().data(), w.bytes().size(), deadline);
    socket.recvAll(&status, sizeof(status), deadline);
    if (status == static_cast<int32_t>(ReplyStatus::Ok)) {
      SocketAddress successor;
      socket.recvAll(&successor, sizeof(successor), deadline);
      MSCCLPP_CHECK_USAGE(socketAddressLength(successor) != 0, "rank ", rank_, ": rank 0 at ", root,
                          " sent an unset successor address");
      uint64_t secret = 0;
      socket.recvAll(&secret, sizeof(secret), deadline);
      MSCCLPP_CHECK_USAGE(secret != 0, "rank ", rank_, ": rank 0 at ", root, " sent no job secret");
      setSecret(secret);
      return successor;
    }
    uint32_t length = 0;
    socket.recvAll(&length, sizeof(length), deadline);
    MSCCLPP_CHECK_USAGE(length <= kMaxReplyText, "rank ", rank_, ": rank 0 at ", root, " sent an oversized rejection (",
                        length, " bytes)");
    std::string text(length, '\0');
    socket.recvAll(text.data(), length, deadline);
    if (status == static_cast<int32_t>(ReplyStatus::Rejected)) {
      MSCCLPP_THROW(InvalidUsage, "rank ", rank_, ": rank 0 rejected this rank: ", text);
    }
    MSCCLPP_THROW(Aborted, "rank ", rank_, ": rank 0 abandoned initialization: ", text);
  } catch (const Error& e) {
    if (e.getErrorCode() == ErrorCode::Timeout) {
      MSCCLPP_THROW(Timeout, "rank ", rank_, ": timed out after ", secondsText(timeoutSec_), " waiting for rank 0 at ",
                    root, " to answer the check-in (it answers once all ", nRanks_, " ranks have checked in)");
    }
    if (e.getErrorCode() == ErrorCode::Aborted && std::string(e.what()).find("rank 0") == std::string::npos) {
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": rank 0 at ", root,
                    " closed the connection during initialization (it failed, exited or was killed)");
    }
    throw;
  }
}

void TcpBootstrap::Impl::formRing(const SocketAddress& successor, const Deadline& deadline) {
  const int next = (rank_ + 1) % nRanks_;
  const int prev = (rank_ - 1 + nRanks_) % nRanks_;
  ringNext_ = openConnection(next, successor, ConnKind::Ring, 0, deadline);
  auto liveness = openConnection(next, successor, ConnKind::Liveness, 0, deadline);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    newLiveness_.emplace_back(liveness, next);
    livenessSockets_.push_back(liveness);
  }
  wakeService();
  ringPrev_ = waitIncoming(ConnKind::Ring, prev, 0, deadline);
  waitIncoming(ConnKind::Liveness, prev, 0, deadline);
}

}  // namespace mscclpp

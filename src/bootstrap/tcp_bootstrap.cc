// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// TcpBootstrap: the ranks find each other through rank 0, form a ring, and then talk over direct
// connections opened on demand. docs/bootstrap.md describes the protocol and the failure semantics;
// the short version:
//  - Rank 0 collects a check-in {rank, nRanks, listen address, host hash} from every rank at the
//    UniqueId's address, rejects mismatches, and answers each rank with its ring successor's address.
//  - Each rank connects a ring data stream and a liveness stream to its successor, then the ring
//    all-gathers everyone's listen address and host hash.
//  - send/recv use one connection per (direction, peer, tag), opened by the sender on first use.
//  - A service thread per bootstrap accepts connections on the rank's listener (dropping strangers
//    with a WARN) and watches the liveness streams. A neighbour that vanishes without saying goodbye,
//    or that aborted, makes this rank abort: every socket is shut down, so the failure travels around
//    the ring to ranks that had no direct connection with the one that failed.

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mscclpp/core.hpp>
#include <mscclpp/env.hpp>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "bootstrap/socket.hpp"
#include "common/checks.hpp"
#include "common/identity.hpp"
#include "common/serialization.hpp"

namespace mscclpp {

namespace {

using Clock = std::chrono::steady_clock;

// The magic of UniqueIds made from an "ip:port" string, which every rank must agree on without talking.
constexpr uint64_t kStringIdMagic = 0xdeadbeef;
// How long a freshly accepted connection may take to send its handshake before it is dropped. A
// legitimate rank sends it at once; this only bounds what a stray or stuck client can hold.
constexpr auto kHandshakeTimeout = std::chrono::seconds(5);
// Connections still sending their handshake; beyond this the newest is dropped, so a flood of strays
// cannot exhaust the process's descriptors.
constexpr size_t kMaxPendingConnections = 256;
// Longest error text rank 0 sends back with a rejection.
constexpr uint32_t kMaxReplyText = 64 * 1024;

enum class ConnKind : uint32_t { CheckIn = 1, Data = 2, Ring = 3, Liveness = 4 };

const char* kindName(uint32_t kind) {
  switch (kind) {
    case static_cast<uint32_t>(ConnKind::CheckIn):
      return "check-in";
    case static_cast<uint32_t>(ConnKind::Data):
      return "data";
    case static_cast<uint32_t>(ConnKind::Ring):
      return "ring";
    case static_cast<uint32_t>(ConnKind::Liveness):
      return "liveness";
    default:
      return "unknown";
  }
}

// The first bytes on every connection: magic u64, kind u32, rank i32, tag i32.
constexpr size_t kHandshakeBytes = 20;
// After a check-in handshake: nRanks i32, listen address (28), host hash u64.
constexpr size_t kCheckInBytes = 4 + sizeof(SocketAddress) + 8;
// What the ring all-gathers during initialize: listen address and host hash.
constexpr size_t kPeerInfoBytes = sizeof(SocketAddress) + 8;

// Liveness stream bytes: a clean goodbye, or "this rank aborted" followed by the root cause (u32
// length, text), which every rank forwards so that the whole ring learns what failed first.
constexpr char kGoodbye = 'B';
constexpr char kAbortNotice = 'A';
constexpr uint32_t kMaxCauseText = 2048;
// How long an operation that saw a peer close its connection waits for the liveness stream to say why.
constexpr auto kCauseGrace = std::chrono::seconds(1);

// Rank 0's answer to a check-in: status, then the successor's address or an error text.
enum class ReplyStatus : int32_t { Ok = 0, Rejected = 1, GroupAborted = 2 };

struct Handshake {
  uint64_t magic;
  uint32_t kind;
  int32_t rank;
  int32_t tag;
};

std::vector<char> encodeHandshake(const Handshake& h) {
  ByteWriter w;
  w.put(h.magic).put(h.kind).put(h.rank).put(h.tag);
  return w.take();
}

Handshake decodeHandshake(const char* bytes) {
  ByteReader r(bytes, kHandshakeBytes, "bootstrap handshake");
  Handshake h;
  h.magic = r.get<uint64_t>("magic");
  h.kind = r.get<uint32_t>("kind");
  h.rank = r.get<int32_t>("rank");
  h.tag = r.get<int32_t>("tag");
  return h;
}

struct PeerInfo {
  SocketAddress listen;
  uint64_t hostHash;
};

std::string secondsText(int64_t sec) { return std::to_string(sec) + " s"; }

// An Error's message without the " (mscclpp failure: X)" that what() appends, to nest it in another.
std::string plainMessage(const std::exception& e) {
  std::string text = e.what();
  size_t pos = text.rfind(" (mscclpp failure: ");
  if (pos != std::string::npos && !text.empty() && text.back() == ')') text.erase(pos);
  return text;
}

// UniqueId layout: magic u64 at 0, SocketAddress at 8, zeros after.
UniqueId encodeUniqueId(uint64_t magic, const SocketAddress& address) {
  UniqueId id{};
  std::memcpy(id.data(), &magic, sizeof(magic));
  std::memcpy(id.data() + sizeof(magic), &address, sizeof(address));
  return id;
}

void decodeUniqueId(const UniqueId& id, uint64_t* magic, SocketAddress* address) {
  std::memcpy(magic, id.data(), sizeof(*magic));
  std::memcpy(address, id.data() + sizeof(*magic), sizeof(*address));
}

uint64_t randomMagic() {
  UniqueFd fd(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw SysError("createUniqueId: open(/dev/urandom) failed", errno);
  uint64_t magic = 0;
  size_t got = 0;
  while (got < sizeof(magic)) {
    ssize_t n = ::read(fd.get(), reinterpret_cast<char*>(&magic) + got, sizeof(magic) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SysError("createUniqueId: read(/dev/urandom) failed", n < 0 ? errno : EIO);
    got += static_cast<size_t>(n);
  }
  // Zero marks an id that was never set; the string form's fixed magic must not collide either.
  if (magic == 0 || magic == kStringIdMagic) magic ^= 0x9e3779b97f4a7c15ULL;
  return magic;
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

// A connection that has been accepted but has not finished its handshake yet.
struct PendingConnection {
  std::shared_ptr<TcpSocket> socket;
  std::vector<char> bytes;  // received so far
  size_t expected;          // bytes needed before it can be judged
  Clock::time_point deadline;
};

// One (direction, peer, tag) stream: the socket is opened on first use; the mutex keeps messages of
// concurrent callers on the same stream whole.
struct Channel {
  std::mutex mutex;
  std::shared_ptr<TcpSocket> socket;
};

}  // namespace

class TcpBootstrap::Impl {
 public:
  Impl(int rank, int nRanks) : rank_(rank), nRanks_(nRanks) {}
  ~Impl();

  void initialize(const UniqueId& id, const std::string& ifname, int64_t timeoutSec);

  int rank_;
  int nRanks_;
  int nRanksPerNode_ = 0;
  UniqueId id_{};
  bool started_ = false;
  bool initialized_ = false;

  void checkReady(const char* op) const {
    MSCCLPP_CHECK_USAGE(initialized_, "TcpBootstrap::", op, " on rank ", rank_, ": the bootstrap is not initialized",
                        started_ ? " (initialize failed)" : "");
  }
  void checkPeer(const char* op, int peer) const {
    MSCCLPP_CHECK_USAGE(peer >= 0 && peer < nRanks_, "TcpBootstrap::", op, " on rank ", rank_, ": peer ", peer,
                        " is outside 0..", nRanks_ - 1);
  }

  void send(const void* data, int size, int peer, int tag);
  void recv(void* data, int size, int peer, int tag);
  void allGather(void* all, int size);
  void broadcast(void* data, int size, int root);

 private:
  // ---- setup ----
  SocketAddress runRoot(TcpListener& rootListener, const SocketAddress& ownListen, const Deadline& deadline);
  SocketAddress checkIn(const SocketAddress& ownListen, const Deadline& deadline);
  void formRing(const SocketAddress& successor, const Deadline& deadline);

  // ---- connections ----
  std::shared_ptr<TcpSocket> openConnection(int peer, const SocketAddress& to, ConnKind kind, int tag,
                                            const Deadline& deadline);
  std::shared_ptr<TcpSocket> waitIncoming(ConnKind kind, int peer, int tag, const Deadline& deadline);
  void track(const std::shared_ptr<TcpSocket>& socket);
  std::shared_ptr<Channel> channel(std::map<std::pair<int, int>, std::shared_ptr<Channel>>& table, int peer, int tag);
  std::string describePeer(int peer) const;
  Deadline opDeadline() const { return Deadline::fromTimeoutSec(timeoutSec_); }

  // ---- frames ----
  void sendFrame(TcpSocket& socket, const void* data, int size, const Deadline& deadline);
  /// Receives one frame into `data`; returns its length. A frame longer than `capacity` is consumed and
  /// reported through `tooLong` (its length), leaving the stream in step.
  int recvFrame(TcpSocket& socket, void* data, int capacity, const Deadline& deadline, int* tooLong);
  void ringExchange(const char* sendData, char* recvData, int size, const Deadline& deadline, const char* op);

  // ---- failure ----
  /// Rethrows `e` with this rank and `doing` in the message; unless it is the caller's mistake, first
  /// aborts the bootstrap so that the failure reaches the other ranks.
  [[noreturn]] void fail(const std::exception& e, const std::string& doing);
  /// Shuts every socket down and tells the ring neighbours; `rootCause` travels on to them (by
  /// default the reason itself: this rank is where the failure started).
  void abort(const std::string& reason, const std::string& rootCause = "");
  void throwIfAborted(const std::string& doing);

  // ---- service thread ----
  void startService();
  void stopService();
  void serviceLoop();
  void wakeService();
  void dropPending(const PendingConnection& p, const std::string& why) const;
  /// Reads what a pending connection has sent (if `readable`) and drops it if it closed or its magic
  /// is wrong; returns whether it was dropped. `stage` names what it was sending, for the WARN.
  bool readPending(PendingConnection& p, bool readable, const char* stage) const;
  void admit(std::shared_ptr<TcpSocket> socket, const Handshake& h, std::vector<std::pair<std::shared_ptr<TcpSocket>, int>>& liveness);

  int64_t timeoutSec_ = 30;
  uint64_t magic_ = 0;
  SocketAddress rootAddress_{};
  TcpListener listener_;
  std::vector<PeerInfo> peers_;

  std::thread service_;
  UniqueFd wakeFd_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable cv_;
  std::map<std::tuple<ConnKind, int, int>, std::shared_ptr<TcpSocket>> incoming_;  // accepted, unclaimed
  std::set<std::tuple<ConnKind, int, int>> claimed_;
  std::vector<std::shared_ptr<TcpSocket>> sockets_;  // every established socket, to shut down on abort
  std::vector<std::pair<std::shared_ptr<TcpSocket>, int>> newLiveness_;  // handed to the service thread
  std::vector<std::shared_ptr<TcpSocket>> livenessSockets_;
  std::vector<bool> departed_;
  bool aborted_ = false;
  std::atomic<bool> abortedFlag_{false};  // aborted_, readable without the mutex on fast paths
  std::string abortReason_;
  std::string rootCause_;
  std::map<std::pair<int, int>, std::shared_ptr<Channel>> sendChannels_, recvChannels_;

  std::mutex ringMutex_;  // one collective at a time
  std::shared_ptr<TcpSocket> ringNext_, ringPrev_;
};

// ---------------------------------------------------------------------------------------------------
// setup

void TcpBootstrap::Impl::initialize(const UniqueId& id, const std::string& ifname, int64_t timeoutSec) {
  MSCCLPP_CHECK_USAGE(!started_, "TcpBootstrap::initialize on rank ", rank_, ": already called");
  started_ = true;
  timeoutSec_ = timeoutSec == TcpBootstrap::DefaultTimeoutSec ? env()->bootstrapTimeoutSec : timeoutSec;
  const Deadline deadline = Deadline::fromTimeoutSec(timeoutSec_);
  decodeUniqueId(id, &magic_, &rootAddress_);
  MSCCLPP_CHECK_USAGE(magic_ != 0 && socketAddressLength(rootAddress_) != 0, "TcpBootstrap::initialize on rank ",
                      rank_, ": the UniqueId is empty (made by createUniqueId on one rank and passed to all?)");
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
  std::vector<PendingConnection> pending;
  const std::string where = toString(rootListener.address());

  auto reply = [&](TcpSocket& socket, ReplyStatus status, const std::string& text, const SocketAddress* successor) {
    ByteWriter w;
    w.put(static_cast<int32_t>(status));
    if (successor) {
      w.put(*successor);
    } else {
      std::string clipped = text.substr(0, kMaxReplyText);
      w.put(static_cast<uint32_t>(clipped.size())).putBytes(clipped.data(), clipped.size());
    }
    // The peer is waiting for exactly this; a short bound keeps a dead peer from delaying the others.
    socket.sendAll(w.bytes().data(), w.bytes().size(), Deadline::after(std::chrono::seconds(1)).min(deadline));
  };
  // Rejects the group: the offenders learn why, every other rank that checked in learns that rank 0
  // gave up, and rank 0 throws.
  auto rejectGroup = [&](ErrorCode code, const std::string& message, std::vector<std::shared_ptr<TcpSocket>> offenders) {
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
    std::vector<pollfd> fds;
    fds.push_back({rootListener.fd(), POLLIN, 0});
    for (auto& p : pending) fds.push_back({p.socket->fd(), POLLIN, 0});
    std::vector<int> joinedRanks;
    for (int r = 1; r < nRanks_; ++r) {
      if (joined[r]) {
        fds.push_back({joined[r]->socket->fd(), POLLIN, 0});
        joinedRanks.push_back(r);
      }
    }
    Deadline wake = deadline;
    for (auto& p : pending) wake = wake.min(Deadline::after(std::chrono::ceil<std::chrono::milliseconds>(p.deadline - Clock::now())));
    int rc = ::poll(fds.data(), fds.size(), wake.pollTimeoutMs());
    if (rc < 0 && errno != EINTR) throw SysError(concat("rank 0: poll() on the root listener ", where, " failed"), errno);

    // A rank that checked in and then disconnected has died: nobody can complete the ring without it.
    for (size_t i = 0; i < joinedRanks.size(); ++i) {
      const pollfd& pfd = fds[1 + pending.size() + i];
      if (!pfd.revents) continue;
      int r = joinedRanks[i];
      rejectGroup(ErrorCode::Aborted,
                  concat("rank 0: rank ", r, " (", toString(joined[r]->from),
                         ") closed its connection during initialization (it failed, gave up, exited or was killed)"),
                  {});
    }

    std::vector<PendingConnection> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      PendingConnection& p = pending[i];
      bool done = readPending(p, fds[1 + i].revents != 0, "check-in");
      if (!done && p.bytes.size() >= kHandshakeBytes) {
        Handshake h = decodeHandshake(p.bytes.data());
        if (h.kind != static_cast<uint32_t>(ConnKind::CheckIn)) {
          dropPending(p, concat("a ", kindName(h.kind), " connection sent to the root address"));
          done = true;
        }
      }
      if (!done && p.bytes.size() == p.expected) {
        done = true;
        Handshake h = decodeHandshake(p.bytes.data());
        {
          ByteReader reader(p.bytes.data() + kHandshakeBytes, kCheckInBytes, "bootstrap check-in");
          int32_t theirN = reader.get<int32_t>("nRanks");
          SocketAddress listen = reader.get<SocketAddress>("listen address");
          reader.get<uint64_t>("host hash");
          std::string from = toString(p.socket->peer());
          if (theirN != nRanks_) {
            rejectGroup(ErrorCode::InvalidUsage,
                        concat("rank 0: rank ", h.rank, " (", from, ") joined with nRanks ", theirN,
                               ", but rank 0 has nRanks ", nRanks_, "; every rank must pass the same nRanks"),
                        {p.socket});
          }
          if (h.rank < 0 || h.rank >= nRanks_) {
            rejectGroup(ErrorCode::InvalidUsage,
                        concat("rank 0: a process at ", from, " checked in as rank ", h.rank, ", outside 0..",
                               nRanks_ - 1),
                        {p.socket});
          }
          if (joined[h.rank]) {
            std::vector<std::shared_ptr<TcpSocket>> offenders{p.socket};
            if (joined[h.rank]->socket) offenders.push_back(joined[h.rank]->socket);
            rejectGroup(ErrorCode::InvalidUsage,
                        concat("rank 0: rank ", h.rank, " checked in twice, from ", toString(joined[h.rank]->from),
                               " and from ", from, "; every process must have its own rank"),
                        offenders);
          }
          joined[h.rank] = Joined{p.socket, listen, p.socket->peer()};
          ++count;
          LOG_DEBUG(NET, "rank 0: rank ", h.rank, " checked in from ", from, " (", count, " of ", nRanks_, ")");
        }
      }
      if (!done && Clock::now() >= p.deadline) {
        dropPending(p, concat("no complete check-in within ", kHandshakeTimeout.count(), " s"));
        done = true;
      }
      if (!done) still.push_back(std::move(p));
    }
    pending = std::move(still);

    if (fds[0].revents) {
      TcpSocket socket;
      while (rootListener.tryAccept(&socket)) {
        if (pending.size() >= kMaxPendingConnections) {
          LOG_WARN(NET, "rank 0: dropped a connection from ", toString(socket.peer()), " to ", where, ": ",
                   kMaxPendingConnections, " connections are already pending");
          continue;
        }
        PendingConnection p{std::make_shared<TcpSocket>(std::move(socket)), {}, kHandshakeBytes + kCheckInBytes,
                            Clock::now() + kHandshakeTimeout};
        p.bytes.reserve(p.expected);
        pending.push_back(std::move(p));
      }
    }
  }
  for (auto& p : pending) dropPending(p, "no complete check-in by the end of initialization");

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
      return successor;
    }
    uint32_t length = 0;
    socket.recvAll(&length, sizeof(length), deadline);
    MSCCLPP_CHECK_USAGE(length <= kMaxReplyText, "rank ", rank_, ": rank 0 at ", root,
                        " sent an oversized rejection (", length, " bytes)");
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

// ---------------------------------------------------------------------------------------------------
// connections

void TcpBootstrap::Impl::track(const std::shared_ptr<TcpSocket>& socket) {
  std::lock_guard<std::mutex> lock(mutex_);
  sockets_.push_back(socket);
  if (aborted_) socket->shutdown();
}

std::string TcpBootstrap::Impl::describePeer(int peer) const {
  if (peer >= 0 && peer < static_cast<int>(peers_.size()) && socketAddressLength(peers_[peer].listen) != 0) {
    return concat("rank ", peer, " (", toString(peers_[peer].listen), ")");
  }
  return concat("rank ", peer);
}

std::shared_ptr<TcpSocket> TcpBootstrap::Impl::openConnection(int peer, const SocketAddress& to, ConnKind kind, int tag,
                                                              const Deadline& deadline) {
  throwIfAborted(concat("connecting to rank ", peer));
  auto socket = std::make_shared<TcpSocket>(
      TcpSocket::connect(to, deadline, concat("opening a ", kindName(static_cast<uint32_t>(kind)), " connection to rank ",
                                              peer)));
  socket->setNoDelay();
  track(socket);
  auto handshake = encodeHandshake({magic_, static_cast<uint32_t>(kind), rank_, tag});
  socket->sendAll(handshake.data(), handshake.size(), deadline);
  return socket;
}

std::shared_ptr<TcpSocket> TcpBootstrap::Impl::waitIncoming(ConnKind kind, int peer, int tag, const Deadline& deadline) {
  auto key = std::make_tuple(kind, peer, tag);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (aborted_) {
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": waiting for ", describePeer(peer), " to connect: the bootstrap was aborted: ",
                    abortReason_);
    }
    auto it = incoming_.find(key);
    if (it != incoming_.end()) {
      auto socket = it->second;
      incoming_.erase(it);
      claimed_.insert(key);
      return socket;
    }
    if (deadline.isNever()) {
      cv_.wait(lock);
    } else if (cv_.wait_until(lock, deadline.at()) == std::cv_status::timeout && deadline.expired()) {
      bool gone = peer >= 0 && peer < nRanks_ && departed_[peer];
      MSCCLPP_THROW(Timeout, "rank ", rank_, ": timed out after ", secondsText(timeoutSec_), " waiting for ",
                    describePeer(peer), " to open its ", kindName(static_cast<uint32_t>(kind)), " connection",
                    kind == ConnKind::Data ? concat(" for tag ", tag) : std::string(), " to this rank at ",
                    toString(listener_.address()), gone ? " (that rank has already destroyed its bootstrap)" : "");
    }
  }
}

std::shared_ptr<Channel> TcpBootstrap::Impl::channel(std::map<std::pair<int, int>, std::shared_ptr<Channel>>& table,
                                                     int peer, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = table[{peer, tag}];
  if (!slot) slot = std::make_shared<Channel>();
  return slot;
}

// ---------------------------------------------------------------------------------------------------
// frames: [i32 length][bytes]

void TcpBootstrap::Impl::sendFrame(TcpSocket& socket, const void* data, int size, const Deadline& deadline) {
  int32_t length = size;
  // Small frames go out in one call: one segment, one wake-up at the receiver.
  if (size <= 4096) {
    char buf[4 + 4096];
    std::memcpy(buf, &length, 4);
    if (size > 0) std::memcpy(buf + 4, data, size);
    socket.sendAll(buf, 4 + size, deadline);
    return;
  }
  socket.sendAll(&length, 4, deadline);
  socket.sendAll(data, size, deadline);
}

int TcpBootstrap::Impl::recvFrame(TcpSocket& socket, void* data, int capacity, const Deadline& deadline, int* tooLong) {
  int32_t length = 0;
  socket.recvAll(&length, 4, deadline);
  if (length < 0) {
    MSCCLPP_THROW(RemoteError, "received a malformed frame header (length ", length, ")");
  }
  *tooLong = 0;
  if (length > capacity) {
    char sink[65536];
    for (int left = length; left > 0;) {
      int n = std::min<int>(left, sizeof(sink));
      socket.recvAll(sink, n, deadline);
      left -= n;
    }
    *tooLong = length;
    return length;
  }
  socket.recvAll(data, length, deadline);
  return length;
}

// One step of a ring collective: send a frame to the successor while receiving one of the same size
// from the predecessor. Both directions progress together, so no rank can block the ring by filling
// its socket buffers first.
void TcpBootstrap::Impl::ringExchange(const char* sendData, char* recvData, int size, const Deadline& deadline,
                                      const char* op) {
  const int next = (rank_ + 1) % nRanks_;
  const int prev = (rank_ - 1 + nRanks_) % nRanks_;
  int32_t outHeader = size, inHeader = 0;
  const size_t total = 4 + static_cast<size_t>(size);
  size_t outDone = 0, inDone = 0;
  // A small frame leaves as one contiguous buffer: one segment, one wake-up at the successor.
  char small[4 + 4096];
  const bool contiguous = size <= 4096;
  if (contiguous) {
    std::memcpy(small, &outHeader, 4);
    if (size > 0) std::memcpy(small + 4, sendData, size);
  }
  // Socket errors only know addresses; the ring knows which rank is behind each.
  auto naming = [&](int peer, auto&& io) -> size_t {
    try {
      return io();
    } catch (const Error& e) {
      if (e.getErrorCode() != ErrorCode::Aborted) throw;
      throwIfAborted(op);
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", op, ": ", describePeer(peer),
                    " closed its ring connection (it failed, exited or was killed)");
    }
  };
  while (outDone < total || inDone < total) {
    bool progress = false;
    if (outDone < total) {
      size_t n = naming(next, [&] {
        if (contiguous) return ringNext_->trySend(small + outDone, total - outDone);
        return outDone < 4 ? ringNext_->trySend(reinterpret_cast<char*>(&outHeader) + outDone, 4 - outDone)
                           : ringNext_->trySend(sendData + (outDone - 4), total - outDone);
      });
      outDone += n;
      progress |= n > 0;
    }
    if (inDone < total) {
      size_t n = naming(prev, [&] {
        return inDone < 4 ? ringPrev_->tryRecv(reinterpret_cast<char*>(&inHeader) + inDone, 4 - inDone)
                          : ringPrev_->tryRecv(recvData + (inDone - 4), total - inDone);
      });
      inDone += n;
      progress |= n > 0;
      if (inDone == 4 && n > 0 && inHeader != size) {
        std::string message = concat("rank ", rank_, ": ", op, ": ", describePeer(prev), " sent ", inHeader,
                                     " bytes where this rank expects ", size,
                                     "; every rank must pass the same size to a collective");
        abort(message);
        throw Error(message, ErrorCode::InvalidUsage);
      }
    }
    if (progress) continue;
    pollfd fds[2];
    int count = 0;
    if (outDone < total) fds[count++] = {ringNext_->fd(), POLLOUT, 0};
    if (inDone < total) fds[count++] = {ringPrev_->fd(), POLLIN, 0};
    int rc = ::poll(fds, count, deadline.pollTimeoutMs());
    if (rc < 0 && errno != EINTR) throw SysError(concat("rank ", rank_, ": poll() in ", op, " failed"), errno);
    if (rc == 0 && deadline.expired()) {
      int waitedFor = inDone < total ? prev : next;
      MSCCLPP_THROW(Timeout, "rank ", rank_, ": timed out after ", secondsText(timeoutSec_), " in ", op,
                    " waiting for ", describePeer(waitedFor),
                    inDone < total ? " to send its part" : " to take this rank's part");
    }
    if (ringNext_->isShutdown() || ringPrev_->isShutdown()) throwIfAborted(op);
  }
}

// ---------------------------------------------------------------------------------------------------
// failure

void TcpBootstrap::Impl::throwIfAborted(const std::string& doing) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) {
    MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", doing, ": the bootstrap was aborted: ", abortReason_);
  }
}

void TcpBootstrap::Impl::fail(const std::exception& e, const std::string& doing) {
  const Error* error = dynamic_cast<const Error*>(&e);
  if (error && error->getErrorCode() == ErrorCode::InvalidUsage) throw *error;
  {
    // A failure caused by an earlier abort (our own shutdown) is reported as that abort.
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) {
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", doing, " interrupted: the bootstrap was aborted: ", abortReason_);
    }
  }
  if (error && error->getErrorCode() == ErrorCode::Aborted) {
    // A peer that closed its connection has usually just aborted and said why on the liveness stream;
    // give the service thread a moment to hear it, so the error names the failure that started it all.
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, kCauseGrace, [&] { return aborted_; });
    if (aborted_) {
      MSCCLPP_THROW(Aborted, "rank ", rank_, ": ", doing, " interrupted: the bootstrap was aborted: ", abortReason_);
    }
  }
  std::string text = plainMessage(e);
  // Messages built in this file already start with "rank N:"; socket-level ones get the context added.
  std::string message = text;
  if (text.rfind(concat("rank ", rank_, ":"), 0) != 0) {
    message = error && error->getErrorCode() == ErrorCode::Timeout
                  ? concat("rank ", rank_, ": timed out after ", secondsText(timeoutSec_), " in ", doing, " (", text, ")")
                  : concat("rank ", rank_, ": ", doing, " failed: ", text);
  }
  abort(message);
  if (error) throw Error(message, error->getErrorCode());
  if (auto sys = dynamic_cast<const SysError*>(&e)) throw SysError(message, sys->getErrorCode());
  throw Error(message, ErrorCode::InternalError);
}

void TcpBootstrap::Impl::abort(const std::string& reason, const std::string& rootCause) {
  std::vector<std::shared_ptr<TcpSocket>> sockets, liveness;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) return;
    aborted_ = true;
    abortedFlag_.store(true);
    abortReason_ = reason;
    rootCause_ = rootCause.empty() ? reason : rootCause;
    sockets = sockets_;
    liveness = livenessSockets_;
  }
  LOG_WARN(NET, "bootstrap of rank ", rank_, " aborted, closing its connections: ", reason);
  std::string cause = rootCause_.substr(0, kMaxCauseText);
  ByteWriter notice;
  notice.put(kAbortNotice).put(static_cast<uint32_t>(cause.size())).putBytes(cause.data(), cause.size());
  for (auto& s : liveness) {
    try {
      // A few hundred bytes on an idle stream: the socket buffer takes it whole without waiting.
      s->sendAll(notice.bytes().data(), notice.bytes().size(), Deadline::after(std::chrono::milliseconds(100)));
    } catch (const std::exception&) {
      // The neighbour is gone already; the shutdown below is all it could have learned.
    }
  }
  for (auto& s : sockets) s->shutdown();
  listener_.shutdown();
  cv_.notify_all();
  wakeService();
}

// ---------------------------------------------------------------------------------------------------
// service thread: accepts connections and watches the liveness streams

void TcpBootstrap::Impl::startService() {
  wakeFd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wakeFd_.valid()) throw SysError(concat("rank ", rank_, ": eventfd() for the bootstrap service failed"), errno);
  service_ = std::thread([this] { serviceLoop(); });
}

void TcpBootstrap::Impl::wakeService() {
  if (!wakeFd_.valid()) return;
  uint64_t one = 1;
  MSCCLPP_SYSCHECK_IGNORE(NET, ::write(wakeFd_.get(), &one, sizeof(one)));
}

void TcpBootstrap::Impl::stopService() {
  stopping_.store(true);
  wakeService();
  if (service_.joinable()) service_.join();
}

void TcpBootstrap::Impl::dropPending(const PendingConnection& p, const std::string& why) const {
  LOG_WARN(NET, "rank ", rank_, ": dropped a connection from ", toString(p.socket->peer()), ": ", why);
}

bool TcpBootstrap::Impl::readPending(PendingConnection& p, bool readable, const char* stage) const {
  if (readable) {
    try {
      char buf[kHandshakeBytes + kCheckInBytes];
      size_t got = p.socket->tryRecv(buf, std::min(sizeof(buf), p.expected - p.bytes.size()));
      p.bytes.insert(p.bytes.end(), buf, buf + got);
    } catch (const std::exception& e) {
      dropPending(p, concat("closed before completing its ", stage, " (", plainMessage(e), ")"));
      return true;
    }
  }
  if (p.bytes.size() >= sizeof(uint64_t)) {
    uint64_t magic;
    std::memcpy(&magic, p.bytes.data(), sizeof(magic));
    if (magic != magic_) {
      dropPending(p, "wrong magic (not a rank of this job)");
      return true;
    }
  }
  return false;
}

void TcpBootstrap::Impl::admit(std::shared_ptr<TcpSocket> socket, const Handshake& h,
                               std::vector<std::pair<std::shared_ptr<TcpSocket>, int>>& liveness) {
  const std::string from = toString(socket->peer());
  auto drop = [&](const std::string& why) {
    LOG_WARN(NET, "rank ", rank_, ": dropped a connection from ", from, ": ", why);
  };
  if (h.rank < 0 || h.rank >= nRanks_) return drop(concat("it claims rank ", h.rank, ", outside 0..", nRanks_ - 1));
  ConnKind kind;
  switch (h.kind) {
    case static_cast<uint32_t>(ConnKind::Data):
      kind = ConnKind::Data;
      break;
    case static_cast<uint32_t>(ConnKind::Ring):
      kind = ConnKind::Ring;
      break;
    case static_cast<uint32_t>(ConnKind::Liveness):
      kind = ConnKind::Liveness;
      break;
    default:
      return drop(concat("unexpected connection kind ", h.kind, " (", kindName(h.kind), ")"));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_tuple(kind, static_cast<int>(h.rank), static_cast<int>(h.tag));
  if (incoming_.count(key) || claimed_.count(key)) {
    return drop(concat("a second ", kindName(h.kind), " connection from rank ", h.rank, " for tag ", h.tag));
  }
  // Liveness streams are watched here; they are also announced so that initialize can wait for its
  // predecessor's, and so never ends while one is still unknown (it would be closed without a goodbye).
  if (kind == ConnKind::Liveness) {
    liveness.emplace_back(socket, h.rank);
    livenessSockets_.push_back(socket);
  }
  incoming_[key] = socket;
  sockets_.push_back(socket);
  cv_.notify_all();
}

void TcpBootstrap::Impl::serviceLoop() {
  std::vector<PendingConnection> pending;
  std::vector<std::pair<std::shared_ptr<TcpSocket>, int>> liveness;  // socket, peer rank
  while (!stopping_.load()) {
    bool aborted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& l : newLiveness_) liveness.push_back(l);
      newLiveness_.clear();
      aborted = aborted_;
    }
    if (aborted) {
      // Nothing more to accept or watch; wait only to be told to stop.
      pending.clear();
      liveness.clear();
    }
    std::vector<pollfd> fds;
    fds.push_back({wakeFd_.get(), POLLIN, 0});
    if (!aborted) fds.push_back({listener_.fd(), POLLIN, 0});
    const size_t pendingBase = fds.size();
    for (auto& p : pending) fds.push_back({p.socket->fd(), POLLIN, 0});
    const size_t livenessBase = fds.size();
    for (auto& l : liveness) fds.push_back({l.first->fd(), POLLIN, 0});
    Deadline wake = Deadline::never();
    for (auto& p : pending) {
      wake = wake.min(Deadline::after(std::chrono::ceil<std::chrono::milliseconds>(p.deadline - Clock::now())));
    }
    int rc = ::poll(fds.data(), fds.size(), wake.pollTimeoutMs());
    if (rc < 0) {
      if (errno == EINTR) continue;
      LOG_ERROR(NET, "rank ", rank_, ": bootstrap service poll() failed: ", errnoName(errno));
      abort(concat("the bootstrap service of rank ", rank_, " failed: poll(): ", errnoName(errno)));
      continue;
    }
    if (fds[0].revents) {
      uint64_t count;
      while (::read(wakeFd_.get(), &count, sizeof(count)) > 0) {
      }
    }
    if (stopping_.load() || aborted) continue;

    // Liveness: a goodbye is a clean exit; anything else (an abort notice, EOF, a reset) is a failure.
    std::vector<std::pair<std::shared_ptr<TcpSocket>, int>> stillWatched;
    std::string failure, cause;
    for (size_t i = 0; i < liveness.size(); ++i) {
      auto& [socket, peer] = liveness[i];
      if (!fds[livenessBase + i].revents) {
        stillWatched.push_back(liveness[i]);
        continue;
      }
      char byte = 0;
      try {
        if (socket->tryRecv(&byte, 1) == 0) {
          stillWatched.push_back(liveness[i]);
          continue;
        }
        if (byte == kGoodbye) {
          std::lock_guard<std::mutex> lock(mutex_);
          departed_[peer] = true;
          LOG_DEBUG(NET, "rank ", rank_, ": rank ", peer, " destroyed its bootstrap");
          continue;
        }
        // The rest of the notice follows at once; a short bound keeps a broken peer from stalling us.
        try {
          const Deadline noticeDeadline = Deadline::after(std::chrono::seconds(2));
          uint32_t length = 0;
          socket->recvAll(&length, sizeof(length), noticeDeadline);
          if (length > kMaxCauseText) throw std::length_error("oversized abort notice");
          cause.assign(length, '\0');
          socket->recvAll(cause.data(), length, noticeDeadline);
        } catch (const std::exception&) {
          cause = concat("rank ", peer, " aborted without saying why");
        }
        failure = concat("rank ", peer, " aborted its bootstrap after: ", cause);
      } catch (const std::exception&) {
        failure = concat("lost rank ", peer, " (", toString(socket->peer()),
                         "): its connection closed without a goodbye (the process exited, crashed or was killed)");
      }
      break;
    }
    if (!failure.empty()) {
      abort(concat("rank ", rank_, ": ", failure), cause);
      continue;
    }
    liveness = std::move(stillWatched);

    std::vector<PendingConnection> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      PendingConnection& p = pending[i];
      bool done = readPending(p, fds[pendingBase + i].revents != 0, "handshake");
      if (!done && p.bytes.size() == p.expected) {
        admit(p.socket, decodeHandshake(p.bytes.data()), liveness);
        done = true;
      }
      if (!done && Clock::now() >= p.deadline) {
        dropPending(p, concat("no handshake within ", kHandshakeTimeout.count(), " s"));
        done = true;
      }
      if (!done) still.push_back(std::move(p));
    }
    pending = std::move(still);

    if (fds[1].revents) {
      try {
        TcpSocket socket;
        while (listener_.tryAccept(&socket)) {
          if (pending.size() >= kMaxPendingConnections) {
            LOG_WARN(NET, "rank ", rank_, ": dropped a connection from ", toString(socket.peer()), ": ",
                     kMaxPendingConnections, " connections are already pending");
            continue;
          }
          PendingConnection p{std::make_shared<TcpSocket>(std::move(socket)), {}, kHandshakeBytes,
                              Clock::now() + kHandshakeTimeout};
          pending.push_back(std::move(p));
        }
      } catch (const std::exception& e) {
        abort(concat("rank ", rank_, ": accepting on ", toString(listener_.address()), " failed: ", plainMessage(e)));
      }
    }
  }
}

TcpBootstrap::Impl::~Impl() {
  std::vector<std::shared_ptr<TcpSocket>> liveness;
  bool aborted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    liveness = livenessSockets_;
    aborted = aborted_;
  }
  if (!aborted) {
    for (auto& s : liveness) {
      try {
        s->trySend(&kGoodbye, 1);
      } catch (const std::exception&) {
        // The neighbour left first; nothing to tell it.
      }
    }
  }
  stopService();
  // Unread bytes at close make the kernel reset the connection, which could overtake our goodbye.
  for (auto& s : liveness) {
    char sink[64];
    try {
      while (s->tryRecv(sink, sizeof(sink)) > 0) {
      }
    } catch (const std::exception&) {
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// operations

void TcpBootstrap::Impl::send(const void* data, int size, int peer, int tag) {
  checkReady("send");
  checkPeer("send", peer);
  MSCCLPP_CHECK_USAGE(size >= 0 && (data || size == 0), "TcpBootstrap::send on rank ", rank_, ": bad buffer (",
                      data, ", ", size, " bytes)");
  // Error context is built only when there is an error: formatting it costs as much as a message.
  auto doing = [&] { return concat("send to ", describePeer(peer), " tag ", tag); };
  if (abortedFlag_.load()) throwIfAborted(doing());
  const Deadline deadline = opDeadline();
  auto ch = channel(sendChannels_, peer, tag);
  std::lock_guard<std::mutex> lock(ch->mutex);
  try {
    if (!ch->socket) ch->socket = openConnection(peer, peers_[peer].listen, ConnKind::Data, tag, deadline);
    sendFrame(*ch->socket, data, size, deadline);
  } catch (const std::exception& e) {
    fail(e, doing());
  }
}

void TcpBootstrap::Impl::recv(void* data, int size, int peer, int tag) {
  checkReady("recv");
  checkPeer("recv", peer);
  MSCCLPP_CHECK_USAGE(size >= 0 && (data || size == 0), "TcpBootstrap::recv on rank ", rank_, ": bad buffer (",
                      data, ", ", size, " bytes)");
  auto doing = [&] { return concat("recv from ", describePeer(peer), " tag ", tag); };
  if (abortedFlag_.load()) throwIfAborted(doing());
  const Deadline deadline = opDeadline();
  auto ch = channel(recvChannels_, peer, tag);
  std::lock_guard<std::mutex> lock(ch->mutex);
  int tooLong = 0;
  try {
    if (!ch->socket) ch->socket = waitIncoming(ConnKind::Data, peer, tag, deadline);
    recvFrame(*ch->socket, data, size, deadline, &tooLong);
  } catch (const std::exception& e) {
    fail(e, doing());
  }
  MSCCLPP_CHECK_USAGE(tooLong == 0, "TcpBootstrap::recv on rank ", rank_, ": the message from rank ", peer, " tag ", tag,
                      " is ", tooLong, " bytes, longer than the ", size, "-byte buffer (the message was dropped)");
}

void TcpBootstrap::Impl::allGather(void* all, int size) {
  checkReady("allGather");
  MSCCLPP_CHECK_USAGE(size >= 0 && (all || size == 0), "TcpBootstrap::allGather on rank ", rank_, ": bad buffer");
  if (nRanks_ == 1) return;
  if (abortedFlag_.load()) throwIfAborted("allGather");
  const Deadline deadline = opDeadline();
  char* base = static_cast<char*>(all);
  std::lock_guard<std::mutex> ring(ringMutex_);
  try {
    for (int step = 0; step < nRanks_ - 1; ++step) {
      int sendSlot = (rank_ - step + nRanks_) % nRanks_;
      int recvSlot = (rank_ - step - 1 + nRanks_) % nRanks_;
      ringExchange(base + size_t(sendSlot) * size, base + size_t(recvSlot) * size, size, deadline, "allGather");
    }
  } catch (const std::exception& e) {
    fail(e, "allGather");
  }
}

void TcpBootstrap::Impl::broadcast(void* data, int size, int root) {
  checkReady("broadcast");
  checkPeer("broadcast", root);
  MSCCLPP_CHECK_USAGE(size >= 0 && (data || size == 0), "TcpBootstrap::broadcast on rank ", rank_, ": bad buffer");
  if (nRanks_ == 1) return;
  const int next = (rank_ + 1) % nRanks_;
  const int prev = (rank_ - 1 + nRanks_) % nRanks_;
  auto doing = [&] {
    return concat("broadcast from rank ", root, " (ring: from ", describePeer(prev), " to ", describePeer(next), ")");
  };
  if (abortedFlag_.load()) throwIfAborted(doing());
  const Deadline deadline = opDeadline();
  std::lock_guard<std::mutex> ring(ringMutex_);
  try {
    if (rank_ != root) {
      int tooLong = 0;
      int got = recvFrame(*ringPrev_, data, size, deadline, &tooLong);
      if (got != size) {
        std::string message = concat("rank ", rank_, ": ", doing(), ": received ", got, " bytes where this rank expects ",
                                     size, "; every rank must pass the same size");
        abort(message);
        throw Error(message, ErrorCode::InvalidUsage);
      }
    }
    if (next != root) sendFrame(*ringNext_, data, size, deadline);
  } catch (const std::exception& e) {
    fail(e, doing());
  }
}

// ---------------------------------------------------------------------------------------------------
// TcpBootstrap

UniqueId TcpBootstrap::createUniqueId() {
  uint64_t magic = randomMagic();
  TcpListener reserved = TcpListener::bindOnly(localInterfaceAddress());
  UniqueId id = encodeUniqueId(magic, reserved.address());
  std::lock_guard<std::mutex> lock(reservedMutex());
  reservedListeners()[magic] = std::move(reserved);
  return id;
}

TcpBootstrap::TcpBootstrap(int rank, int nRanks) {
  MSCCLPP_CHECK_USAGE(nRanks >= 1, "TcpBootstrap: nRanks must be at least 1, got ", nRanks);
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

// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The private half of TcpBootstrap, shared by the files that implement it (docs/bootstrap.md):
//  - tcp_bootstrap_rendezvous.cc: the UniqueId, check-in at rank 0 and forming the ring;
//  - tcp_bootstrap_service.cc: the service thread (accepting connections, watching the liveness
//    streams) and abort, which carries a failure around the ring;
//  - tcp_bootstrap_operations.cc: send/recv and the ring collectives over per-(peer, tag) streams;
//  - tcp_bootstrap.cc: the public class, forwarding to Impl.

#ifndef MSCCLPP_BOOTSTRAP_TCP_BOOTSTRAP_IMPL_HPP_
#define MSCCLPP_BOOTSTRAP_TCP_BOOTSTRAP_IMPL_HPP_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mscclpp/core.hpp>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bootstrap/handshake_acceptor.hpp"
#include "bootstrap/socket.hpp"
#include "common/checks.hpp"
#include "common/serialization.hpp"

namespace mscclpp {
namespace tcp_bootstrap {

using Clock = std::chrono::steady_clock;

// The most ranks one bootstrap accepts, from its caller or announced by a peer. Rank 0 keeps a table
// entry per rank (about 200 bytes with the address exchange), so this bounds what a wrong or hostile
// count can make it allocate: some 200 MiB, where 2^31 ranks would ask for hundreds of GiB and hang.
// 2^20 is still about five times the GPUs of the largest clusters built so far, one rank per GPU.
constexpr int kMaxRanks = 1 << 20;

// The magic of UniqueIds made from an "ip:port" string, which every rank must agree on without talking.
constexpr uint64_t kStringIdMagic = 0xdeadbeef;
// How long a freshly accepted connection may take to send its handshake before it is dropped. A
// legitimate rank sends it at once; this only bounds what a stray or stuck client can hold.
constexpr auto kHandshakeTimeout = std::chrono::seconds(5);
// Connections still sending their handshake; beyond this the newest is dropped, so a flood of strays
// cannot exhaust the process's descriptors. Also bounds the connections of ranks whose handshake came
// before this rank learned the job's secret (they are judged once it has).
constexpr size_t kMaxPendingConnections = 256;
// Longest error text rank 0 sends back with a rejection.
constexpr uint32_t kMaxReplyText = 64 * 1024;

enum class ConnKind : uint32_t { CheckIn = 1, Data = 2, Ring = 3, Liveness = 4 };

inline const char* kindName(uint32_t kind) {
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

// Rank 0's answer to a check-in: status, then the successor's address and the job's secret, or an
// error text. The secret is chosen by rank 0 and is the magic of every later connection, so only the
// ranks that checked in can open one (with an "ip:port" id the check-in magic is public).
enum class ReplyStatus : int32_t { Ok = 0, Rejected = 1, GroupAborted = 2 };

struct Handshake {
  uint64_t magic;
  uint32_t kind;
  int32_t rank;
  int32_t tag;
};

inline std::vector<char> encodeHandshake(const Handshake& h) {
  ByteWriter w;
  w.put(h.magic).put(h.kind).put(h.rank).put(h.tag);
  return w.take();
}

inline Handshake decodeHandshake(const char* bytes) {
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

inline std::string secondsText(int64_t sec) { return std::to_string(sec) + " s"; }

/// An Error's message without the " (mscclpp failure: X)" that what() appends, to nest it in another.
inline std::string plainMessage(const std::exception& e) {
  std::string text = e.what();
  size_t pos = text.rfind(" (mscclpp failure: ");
  if (pos != std::string::npos && !text.empty() && text.back() == ')') text.erase(pos);
  return text;
}

/// UniqueId layout: magic u64 at 0, SocketAddress at 8, zeros after.
UniqueId encodeUniqueId(uint64_t magic, const SocketAddress& address);

/// One (direction, peer, tag) stream: the socket is opened on first use; the mutex keeps messages of
/// concurrent callers on the same stream whole.
struct Channel {
  std::mutex mutex;
  std::shared_ptr<TcpSocket> socket;
};

}  // namespace tcp_bootstrap

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
  std::shared_ptr<TcpSocket> openConnection(int peer, const SocketAddress& to, tcp_bootstrap::ConnKind kind, int tag,
                                            const Deadline& deadline);
  std::shared_ptr<TcpSocket> waitIncoming(tcp_bootstrap::ConnKind kind, int peer, int tag, const Deadline& deadline);
  void track(const std::shared_ptr<TcpSocket>& socket);
  std::shared_ptr<tcp_bootstrap::Channel> channel(
      std::map<std::pair<int, int>, std::shared_ptr<tcp_bootstrap::Channel>>& table, int peer, int tag);
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
  /// Drops-with-a-WARN reporter for the acceptors; `where` names the listener.
  std::function<void(const std::string&, const std::string&)> dropReporter(const std::string& where) const;
  /// Hands a connection with a complete handshake to the operation waiting for it, once its magic
  /// is known to be the job's secret; earlier ones wait in `held`.
  void admit(std::shared_ptr<TcpSocket> socket, const tcp_bootstrap::Handshake& h,
             std::vector<std::pair<std::shared_ptr<TcpSocket>, int>>& liveness,
             std::vector<std::pair<std::shared_ptr<TcpSocket>, tcp_bootstrap::Handshake>>& held);
  /// Learns the job's secret (rank 0 chose it) and lets the service judge the connections it held.
  void setSecret(uint64_t secret);

  int64_t timeoutSec_ = 30;
  uint64_t magic_ = 0;               // of the UniqueId: check-in connections to rank 0 carry it
  std::atomic<uint64_t> secret_{0};  // of the job, from rank 0: every other connection carries it
  SocketAddress rootAddress_{};
  TcpListener listener_;
  std::vector<tcp_bootstrap::PeerInfo> peers_;

  std::thread service_;
  UniqueFd wakeFd_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable cv_;
  std::map<std::tuple<tcp_bootstrap::ConnKind, int, int>, std::shared_ptr<TcpSocket>> incoming_;  // accepted, unclaimed
  std::set<std::tuple<tcp_bootstrap::ConnKind, int, int>> claimed_;
  std::vector<std::shared_ptr<TcpSocket>> sockets_;  // every established socket, to shut down on abort
  std::vector<std::pair<std::shared_ptr<TcpSocket>, int>> newLiveness_;  // handed to the service thread
  std::vector<std::shared_ptr<TcpSocket>> livenessSockets_;
  std::vector<bool> departed_;
  bool aborted_ = false;
  std::atomic<bool> abortedFlag_{false};  // aborted_, readable without the mutex on fast paths
  std::string abortReason_;
  std::string rootCause_;
  std::map<std::pair<int, int>, std::shared_ptr<tcp_bootstrap::Channel>> sendChannels_, recvChannels_;

  std::mutex ringMutex_;  // one collective at a time
  std::shared_ptr<TcpSocket> ringNext_, ringPrev_;
};

}  // namespace mscclpp

#endif  // MSCCLPP_BOOTSTRAP_TCP_BOOTSTRAP_IMPL_HPP_

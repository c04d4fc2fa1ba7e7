// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "bootstrap/fd_service.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bootstrap/handshake_acceptor.hpp"
#include "common/checks.hpp"
#include "common/identity.hpp"

namespace mscclpp {
namespace {

using Clock = std::chrono::steady_clock;

// A client that connects and then says nothing is dropped after this long, so that it cannot hold a
// slot of the service forever.
constexpr auto kIdleClientLimit = std::chrono::seconds(30);
// More simultaneous clients than this are turned away at accept; ranks of one host are far fewer.
constexpr size_t kMaxClients = 1024;
// Names tried when one is taken (by chance, or by someone squatting it).
constexpr uint32_t kBindAttempts = 64;

std::atomic<uint64_t> nextFdId{1};

sockaddr_un abstractAddress(const std::string& name, socklen_t& length) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  // Abstract namespace: a leading NUL, no file, nothing to clean up after a crash.
  MSCCLPP_ASSERT(name.size() + 1 <= sizeof(addr.sun_path), "socket name too long: ", name);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

ucred peerCredentials(int fd) {
  ucred cred = {};
  socklen_t len = sizeof(cred);
  MSCCLPP_SYSCHECK(getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len));
  return cred;
}

// Sends a reply, with `fdToSend` attached when it is >= 0. Returns false if the socket cannot take it
// right now or is gone: the caller then drops the client.
bool sendReply(int socketFd, int32_t status, int fdToSend) {
  FdServiceReply reply{FdServiceReply::kMagic, status};
  iovec iov{&reply, sizeof(reply)};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fdToSend >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fdToSend, sizeof(int));
  }
  ssize_t n;
  do {
    n = sendmsg(socketFd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n == -1 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(reply));
}

int remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, INT32_MAX));
}

// Waits for `events` on `fd` until `deadline`; throws Error(Timeout) naming `what` when it passes.
void waitFor(int fd, short events, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    pollfd pfd{fd, events, 0};
    int ms = remainingMs(deadline);
    int rc = poll(&pfd, 1, ms);
    if (rc > 0) return;
    if (rc == 0) MSCCLPP_THROW(Timeout, what, ": no answer in time");
    if (errno != EINTR) throw SysError(concat(what, ": poll failed"), errno);
  }
}

}  // namespace

std::string fdServiceSocketName(const FdServiceAddress& address) {
  char name[96];
  std::snprintf(name, sizeof(name), "mscclpp-fd.%016" PRIx64 ".%016" PRIx64 ".%08" PRIx32, address.hostHash,
                address.processHash, address.nonce);
  return name;
}

std::string describeFdService(const FdServiceAddress& address) {
  return concat("the fd service of pid ", address.pid, " (@", fdServiceSocketName(address), ")");
}

const char* fdServiceStatusName(int32_t status) {
  switch (status) {
    case FdServiceReply::Ok:
      return "Ok";
    case FdServiceReply::UnknownId:
      return "UnknownId";
    case FdServiceReply::PermissionDenied:
      return "PermissionDenied";
    case FdServiceReply::BadRequest:
      return "BadRequest";
    case FdServiceReply::SendFailed:
      return "SendFailed";
  }
  return "UnknownStatus";
}

// ---- Registration ----

FdService::Registration::Registration(Registration&& other) noexcept
    : service_(std::move(other.service_)), id_(std::exchange(other.id_, 0)) {}

FdService::Registration& FdService::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    reset();
    service_ = std::move(other.service_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

FdService::Registration::~Registration() { reset(); }

const FdServiceAddress& FdService::Registration::address() const {
  MSCCLPP_ASSERT(service_, "address of an empty fd registration");
  return service_->address();
}

void FdService::Registration::reset() noexcept {
  if (service_) service_->unregister(id_);
  service_.reset();
  id_ = 0;
}

// ---- FdService ----

std::shared_ptr<FdService> FdService::acquire() {
  static std::mutex mutex;
  static std::weak_ptr<FdService> current;
  std::lock_guard<std::mutex> lock(mutex);
  // A forked child inherits the parent's service object but not its thread: it needs its own.
  if (auto service = current.lock(); service && service->ownerPid_ == getpid()) return service;
  std::shared_ptr<FdService> service(new FdService());
  current = service;
  return service;
}

FdService::FdService() {
  address_.hostHash = getHostHash();
  address_.processHash = getPidHash();
  address_.pid = static_cast<int32_t>(getpid());
  ownerPid_ = getpid();

  for (uint32_t attempt = 0;; ++attempt) {
    // Unpredictable, so that another local user cannot take this process's names in advance (the
    // address travels in every handle, so peers need not guess it).
    address_.nonce = static_cast<uint32_t>(randomU64());
    UniqueFd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!sock) throw SysError("fd service: socket(AF_UNIX) failed", errno);
    socklen_t len = 0;
    sockaddr_un addr = abstractAddress(fdServiceSocketName(address_), len);
    if (bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0) {
      MSCCLPP_SYSCHECK(listen(sock.get(), 128));
      listenFd_ = std::move(sock);
      break;
    }
    int err = errno;
    if (err != EADDRINUSE || attempt + 1 >= kBindAttempts) {
      throw SysError(concat("fd service: bind(@", fdServiceSocketName(address_), ") failed"), err);
    }
  }
  wakeFd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wakeFd_) throw SysError("fd service: eventfd failed", errno);
  thread_ = std::thread([this] { serve(); });
  LOG_INFO(MEM, "fd service started: ", describeFdService(address_));
}

FdService::~FdService() {
  if (ownerPid_ != getpid()) {
    // A copy inherited through fork(): the thread runs in the parent only, and the eventfd is shared
    // with it, so waking it would stop the parent's service. The thread object is left alone (a
    // joinable std::thread must not be destroyed) and only this process's descriptors are closed.
    static_cast<void>(new std::thread(std::move(thread_)));
    return;
  }
  uint64_t one = 1;
  if (write(wakeFd_.get(), &one, sizeof(one)) != static_cast<ssize_t>(sizeof(one))) {
    LOG_WARN(MEM, "fd service: waking the service thread failed: ", errnoName(errno));
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fds_.empty()) LOG_DEBUG(MEM, "fd service stopped with ", fds_.size(), " fd(s) still registered");
  LOG_INFO(MEM, "fd service stopped: ", describeFdService(address_));
}

FdService::Registration FdService::registerFd(UniqueFd fd) {
  MSCCLPP_CHECK_USAGE(fd.valid(), "FdService::registerFd: invalid fd");
  uint64_t id = nextFdId.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fds_.emplace(id, std::move(fd));
  }
  return Registration(shared_from_this(), id);
}

size_t FdService::registeredCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fds_.size();
}

void FdService::unregister(uint64_t id) noexcept {
  UniqueFd doomed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = fds_.find(id);
    if (it == fds_.end()) return;
    doomed = std::move(it->second);
    fds_.erase(it);
  }
}

void FdService::serve() {
  const uid_t myUid = geteuid();
  HandshakeAcceptor::Options options;
  options.maxPending = kMaxClients;
  options.helloTimeout = kIdleClientLimit;
  options.what = "request";
  options.firstRead = sizeof(FdServiceRequest);
  options.judge = [](const std::vector<char>&) { return HandshakeAcceptor::Verdict::accept(); };
  options.screen = [myUid](int fd) -> std::string {
    ucred cred = {};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
      return concat("SO_PEERCRED failed: ", errnoName(errno));
    if (cred.uid == myUid) return "";
    // Nothing is read from a stranger and nothing but the refusal is sent.
    sendReply(fd, FdServiceReply::PermissionDenied, -1);
    return concat("it runs as uid ", cred.uid, " (pid ", cred.pid, "); only uid ", myUid, " may fetch fds");
  };
  options.onDrop = [](const std::string& from, const std::string& why) {
    LOG_WARN(MEM, "fd service: dropped ", from, ": ", why);
  };
  HandshakeAcceptor clients(listenFd_.get(), std::move(options));
  std::vector<pollfd> pfds;
  for (;;) {
    pfds.assign(1 + clients.pollCount(), pollfd{});
    pfds[0] = {wakeFd_.get(), POLLIN, 0};
    clients.fillPollFds(pfds.data() + 1);
    int rc = poll(pfds.data(), pfds.size(), clients.nextExpiry().pollTimeoutMs());
    if (rc < 0) {
      if (errno == EINTR) continue;
      LOG_ERROR(MEM, "fd service: poll failed: ", errnoName(errno), "; the service stops answering");
      return;
    }
    if (pfds[0].revents) return;

    std::vector<HandshakeAcceptor::Accepted> requests;
    try {
      requests = clients.process(pfds.data() + 1);
    } catch (const std::exception& e) {
      LOG_WARN(MEM, "fd service: ", e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& client : requests) {
      FdServiceRequest request;
      std::memcpy(&request, client.hello.data(), sizeof(request));
      bool keep;
      if (request.magic != FdServiceRequest::kMagic || request.reserved != 0) {
        LOG_WARN(MEM, "fd service: malformed request, dropping the client");
        sendReply(client.fd.get(), FdServiceReply::BadRequest, -1);
        keep = false;
      } else {
        std::lock_guard<std::mutex> lock(mutex_);
        auto found = fds_.find(request.fdId);
        if (found == fds_.end()) {
          LOG_DEBUG(MEM, "fd service: request for unknown fd id ", request.fdId);
          keep = sendReply(client.fd.get(), FdServiceReply::UnknownId, -1);
        } else {
          keep = sendReply(client.fd.get(), FdServiceReply::Ok, found->second.get());
          if (!keep) LOG_WARN(MEM, "fd service: sending fd id ", request.fdId, " failed: ", errnoName(errno));
        }
      }
      // A client may ask again on the same connection; it waits like a new one, and counts as one.
      if (keep) clients.adopt(std::move(client.fd), client.peer);
    }
  }
}

// ---- client ----

UniqueFd fetchFd(const FdServiceAddress& address, uint64_t id, std::chrono::milliseconds timeout) {
  const std::string what = concat("fetching fd id ", id, " from ", describeFdService(address));
  MSCCLPP_CHECK_USAGE(address.hostHash == getHostHash(), what,
                      ": the service runs on another host (a file descriptor cannot cross hosts)");
  const auto deadline = Clock::now() + timeout;

  UniqueFd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!sock) throw SysError(what + ": socket(AF_UNIX) failed", errno);
  socklen_t len = 0;
  sockaddr_un addr = abstractAddress(fdServiceSocketName(address), len);
  for (;;) {
    if (connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0) break;
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN) {
      // The listen backlog is full: the service is busy, try again until the deadline.
      if (Clock::now() >= deadline) MSCCLPP_THROW(Timeout, what, ": the service stayed busy");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (err == EINPROGRESS) {
      waitFor(sock.get(), POLLOUT, deadline, what);
      int soErr = 0;
      socklen_t soLen = sizeof(soErr);
      MSCCLPP_SYSCHECK(getsockopt(sock.get(), SOL_SOCKET, SO_ERROR, &soErr, &soLen));
      if (soErr == 0) break;
      err = soErr;
    }
    throw SysError(concat(what, ": connect failed (",
                          err == ECONNREFUSED ? "no such service: the exporting process exited, or runs "
                                                "in another network namespace"
                                              : "the service cannot be reached",
                          ")"),
                   err);
  }

  ucred server = peerCredentials(sock.get());
  MSCCLPP_CHECK_USAGE(server.uid == geteuid(), what, ": the service runs as uid ", server.uid,
                      ", not as this process's uid ", geteuid(), "; refusing to talk to it");

  FdServiceRequest request{FdServiceRequest::kMagic, 0, id};
  const char* out = reinterpret_cast<const char*>(&request);
  size_t sent = 0;
  while (sent < sizeof(request)) {
    waitFor(sock.get(), POLLOUT, deadline, what);
    ssize_t n = send(sock.get(), out + sent, sizeof(request) - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw SysError(what + ": send failed", errno);
    }
    sent += n;
  }

  FdServiceReply reply{};
  char* in = reinterpret_cast<char*>(&reply);
  size_t received = 0;
  UniqueFd result;
  while (received < sizeof(reply)) {
    waitFor(sock.get(), POLLIN, deadline, what);
    iovec iov{in + received, sizeof(reply) - received};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(sock.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw SysError(what + ": recvmsg failed", errno);
    }
    if (n == 0) MSCCLPP_THROW(RemoteError, what, ": the service closed the connection without replying");
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
      if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS && cmsg->cmsg_len == CMSG_LEN(sizeof(int))) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
        result.reset(fd);
      }
    }
    if (msg.msg_flags & MSG_CTRUNC)
      MSCCLPP_THROW(RemoteError, what, ": the reply carried more descriptors than asked for");
    received += n;
  }
  if (reply.magic != FdServiceReply::kMagic) MSCCLPP_THROW(RemoteError, what, ": the reply is not from an fd service");
  if (reply.status != FdServiceReply::Ok) {
    MSCCLPP_THROW(RemoteError, what, ": the service replied ", fdServiceStatusName(reply.status),
                  reply.status == FdServiceReply::UnknownId ? " (the export was destroyed, or the id is not its)" : "");
  }
  if (!result) MSCCLPP_THROW(RemoteError, what, ": the reply said Ok but carried no descriptor");
  return result;
}

}  // namespace mscclpp

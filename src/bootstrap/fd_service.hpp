// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The local fd-passing service: how a POSIX file descriptor (an exported cuMem allocation) reaches
// another process of the same host. The exporting process serves registered fds over a unix domain
// socket in the abstract namespace; a peer that knows the service's address and an fd's id asks for it
// and receives a duplicate through SCM_RIGHTS.
//
// Security: the service answers only peers running under its own effective uid (SO_PEERCRED, checked
// on accept before anything is read or sent); the client likewise refuses a service run by another
// uid. Ids are never reused within a process, so a stale id can never fetch a newer fd.
//
// Lifetime: one service per process at a time, shared by its users through FdService::acquire(); it
// stops (thread joined, socket closed) when the last user drops it, never earlier. Its name includes
// the host identity, the process identity (pid and PID namespace) and a random nonce, so two
// processes with the same pid in different PID namespaces, or two services of one process, never
// collide, and a process of another user cannot bind the name first to keep the service from starting.

#ifndef MSCCLPP_BOOTSTRAP_FD_SERVICE_HPP_
#define MSCCLPP_BOOTSTRAP_FD_SERVICE_HPP_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/unique_fd.hpp"

namespace mscclpp {

/// Where a process's fd service listens. Trivially copyable: it travels inside GpuIpcMemHandle.
struct FdServiceAddress {
  uint64_t hostHash;     // getHostHash() of the serving process
  uint64_t processHash;  // getPidHash() of the serving process
  uint32_t nonce;        // random per service: another user can neither predict nor squat the name
  int32_t pid;           // the serving process's pid in its own namespace (for messages only)
};

/// The abstract-namespace socket name of `address` (without the leading NUL byte).
std::string fdServiceSocketName(const FdServiceAddress& address);

/// "pid 1234 on this host (service mscclpp-fd....)" for messages.
std::string describeFdService(const FdServiceAddress& address);

/// Wire format of one request and its reply. Public so that tests can speak the protocol raw.
struct FdServiceRequest {
  static constexpr uint32_t kMagic = 0x6d666431;  // "mfd1"
  uint32_t magic;
  uint32_t reserved;
  uint64_t fdId;
};

struct FdServiceReply {
  static constexpr uint32_t kMagic = 0x6d666432;  // "mfd2"
  /// Reply statuses: Ok carries the fd as SCM_RIGHTS ancillary data; the others carry nothing.
  enum Status : int32_t { Ok = 0, UnknownId = 1, PermissionDenied = 2, BadRequest = 3, SendFailed = 4 };
  uint32_t magic;
  int32_t status;
};

const char* fdServiceStatusName(int32_t status);

/// The serving side. Obtain it through acquire(); thread-safe.
class FdService : public std::enable_shared_from_this<FdService> {
 public:
  /// Keeps one fd registered while alive (and the service running); unregistering closes the fd.
  /// Move-only.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration();

    uint64_t id() const { return id_; }
    bool valid() const { return service_ != nullptr; }
    const FdServiceAddress& address() const;
    /// Unregisters now (closing the fd); further fetches of the id get UnknownId.
    void reset() noexcept;

   private:
    friend class FdService;
    Registration(std::shared_ptr<FdService> service, uint64_t id) : service_(std::move(service)), id_(id) {}
    std::shared_ptr<FdService> service_;
    uint64_t id_ = 0;
  };

  /// The running service of this process, started if none runs. Throws SysError if the socket or
  /// thread cannot be created.
  static std::shared_ptr<FdService> acquire();

  ~FdService();
  FdService(const FdService&) = delete;
  FdService& operator=(const FdService&) = delete;

  const FdServiceAddress& address() const { return address_; }

  /// Takes ownership of `fd` and serves it under the returned registration's id.
  Registration registerFd(UniqueFd fd);

  /// Number of fds registered now.
  size_t registeredCount() const;

 private:
  FdService();
  void serve();
  void unregister(uint64_t id) noexcept;

  FdServiceAddress address_{};
  pid_t ownerPid_ = -1;  // the process whose thread serves; differs in a child forked after start
  UniqueFd listenFd_;
  UniqueFd wakeFd_;  // eventfd: wakes the thread to stop
  std::thread thread_;

  mutable std::mutex mutex_;
  std::map<uint64_t, UniqueFd> fds_;
};

/// Asks the service at `address` for the fd registered under `id` and returns a new descriptor for it.
/// Throws Error(Timeout) when `timeout` passes, SysError when the service cannot be reached (errno of
/// connect), Error(RemoteError) when it refuses (unknown id, permission) and Error(InvalidUsage) when
/// the address is of another host or the service runs under another uid.
UniqueFd fetchFd(const FdServiceAddress& address, uint64_t id,
                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace mscclpp

#endif  // MSCCLPP_BOOTSTRAP_FD_SERVICE_HPP_

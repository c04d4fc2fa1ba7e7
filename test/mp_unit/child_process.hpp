// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_MP_UNIT_CHILD_PROCESS_HPP_
#define MSCCLPP_TEST_MP_UNIT_CHILD_PROCESS_HPP_

// A process a multi-process test starts and may kill: the test binary itself, executed afresh (so it
// can use CUDA even where its parent already did) in a named role instead of as an MPI rank. A role is
// a function registered with MSCCLPP_MP_CHILD_ROLE; main() runs it, without MPI, when the environment
// names it.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace mscclpp::test {

inline constexpr const char* kChildRoleEnv = "MSCCLPP_MP_CHILD_ROLE";
inline constexpr const char* kChildArgEnv = "MSCCLPP_MP_CHILD_ARG";

using ChildRole = std::function<int(const std::string& arg)>;

inline std::map<std::string, ChildRole>& childRoles() {
  static std::map<std::string, ChildRole> roles;
  return roles;
}

struct ChildRoleRegistration {
  ChildRoleRegistration(const std::string& name, ChildRole role) { childRoles()[name] = std::move(role); }
};

#define MSCCLPP_MP_CHILD_ROLE(name, fn) \
  static const ::mscclpp::test::ChildRoleRegistration childRoleRegistration_##fn(name, fn)

/// The exit status main() returns when this process was started as a child; -1 when it was not.
inline int runChildRoleIfAsked() {
  const char* name = std::getenv(kChildRoleEnv);
  if (name == nullptr) return -1;
  const char* arg = std::getenv(kChildArgEnv);
  auto it = childRoles().find(name);
  if (it == childRoles().end()) return 125;
  // Descriptors the parent left open (its launcher's, its own) are not the child's to hold: a socket
  // kept open here would hide the parent's closing it from the other end.
  close_range(3, ~0U, 0);
  try {
    return it->second(arg ? arg : "");
  } catch (const std::exception&) {
    return 126;
  }
}

/// A running child in `role`; killed (SIGKILL) and reaped on destruction if still there.
class ChildProcess {
 public:
  ChildProcess(const std::string& role, const std::string& arg) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      // The child is not an MPI rank: it must not find the launcher's settings.
      if (entry.rfind("OMPI_", 0) == 0 || entry.rfind("PMIX_", 0) == 0) continue;
      if (entry.rfind(std::string(kChildRoleEnv) + "=", 0) == 0) continue;
      if (entry.rfind(std::string(kChildArgEnv) + "=", 0) == 0) continue;
      env.push_back(entry);
    }
    env.push_back(std::string(kChildRoleEnv) + "=" + role);
    env.push_back(std::string(kChildArgEnv) + "=" + arg);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string exe = "/proc/self/exe";
    char* argv[] = {exe.data(), nullptr};
    const int err = posix_spawn(&pid_, exe.c_str(), nullptr, nullptr, argv, envp.data());
    if (err != 0)
      throw std::runtime_error("posix_spawn of a child in role " + role + " failed: " + std::to_string(err));
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      kill();
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  /// Kills the child with SIGKILL and reaps it: when this returns, the kernel has closed its sockets
  /// and released its memory. Returns the wait status.
  int kill() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_MP_UNIT_CHILD_PROCESS_HPP_

// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "bootstrap/fd_service.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mscclpp/errors.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/identity.hpp"
#include "common/process_stats.hpp"
#include "common/unique_fd.hpp"

extern char** environ;

using namespace mscclpp;

namespace {

UniqueFd memfdWith(const std::string& content) {
  UniqueFd fd(memfd_create("fd_service_test", MFD_CLOEXEC));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(pwrite(fd.get(), content.data(), content.size(), 0), static_cast<ssize_t>(content.size()));
  return fd;
}

std::string readAll(int fd) {
  char buf[256] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  return n > 0 ? std::string(buf, n) : std::string();
}

UniqueFd connectRaw(const FdServiceAddress& address) {
  UniqueFd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::string name = fdServiceSocketName(address);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) return UniqueFd();
  return sock;
}

// Reads one reply; returns the status and stores any received fd in `fd`. -1 if no reply came.
int readReply(int sock, UniqueFd& fd) {
  FdServiceReply reply{};
  iovec iov{&reply, sizeof(reply)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n > 0 && c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_type == SCM_RIGHTS) {
      int received;
      std::memcpy(&received, CMSG_DATA(c), sizeof(int));
      fd.reset(received);
    }
  }
  if (n != static_cast<ssize_t>(sizeof(reply)) || reply.magic != FdServiceReply::kMagic) return -1;
  return reply.status;
}

// A child process forked before the service exists: it waits for the address and id on a pipe, runs
// `body` and exits with its result. Forking first keeps the child free of the service's thread.
template <typename Body>
pid_t forkChild(int (&pipeFds)[2], Body body) {
  EXPECT_EQ(pipe(pipeFds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipeFds[1]);
    FdServiceAddress address;
    uint64_t id;
    if (read(pipeFds[0], &address, sizeof(address)) != sizeof(address) ||
        read(pipeFds[0], &id, sizeof(id)) != sizeof(id)) {
      _exit(100);
    }
    _exit(body(address, id));
  }
  close(pipeFds[0]);
  return pid;
}

void sendToChild(int (&pipeFds)[2], const FdServiceAddress& address, uint64_t id) {
  ASSERT_EQ(write(pipeFds[1], &address, sizeof(address)), static_cast<ssize_t>(sizeof(address)));
  ASSERT_EQ(write(pipeFds[1], &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));
  close(pipeFds[1]);
}

int waitChild(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

}  // namespace

TEST(FdServiceTest, SendsARealFdToAnotherProcessThatReadsThroughIt) {
  int pipeFds[2];
  pid_t child = forkChild(pipeFds, [](const FdServiceAddress& address, uint64_t id) {
    try {
      UniqueFd fd = fetchFd(address, id, std::chrono::seconds(10));
      return readAll(fd.get()) == "shared through SCM_RIGHTS" ? 0 : 1;
    } catch (...) {
      return 2;
    }
  });
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("shared through SCM_RIGHTS"));
  sendToChild(pipeFds, service->address(), reg.id());
  EXPECT_EQ(waitChild(child), 0) << "1: wrong content, 2: fetch threw";
}

TEST(FdServiceTest, RefusesAClientRunningAsAnotherUidAndKeepsServing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start a child under another uid";
  int pipeFds[2];
  pid_t child = forkChild(pipeFds, [](const FdServiceAddress& address, uint64_t id) {
    if (setgid(65534) != 0 || setuid(65534) != 0) return 10;
    // Raw protocol: the server's own check is under test, not the client's.
    UniqueFd sock = connectRaw(address);
    if (!sock) return 11;
    FdServiceRequest request{FdServiceRequest::kMagic, 0, id};
    if (send(sock.get(), &request, sizeof(request), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(request))) {
      // The server may already have refused and closed; that is a refusal too.
    }
    UniqueFd fd;
    int status = readReply(sock.get(), fd);
    if (fd) return 12;  // an fd reached a stranger
    if (status != FdServiceReply::PermissionDenied) return 13;
    // The library's client also refuses to talk to a service of another uid.
    try {
      fetchFd(address, id, std::chrono::seconds(5));
      return 14;
    } catch (const Error& e) {
      return e.getErrorCode() == ErrorCode::InvalidUsage ? 0 : 15;
    } catch (...) {
      return 16;
    }
  });
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("secret"));
  sendToChild(pipeFds, service->address(), reg.id());
  EXPECT_EQ(waitChild(child), 0);
  UniqueFd fd = fetchFd(service->address(), reg.id());
  EXPECT_EQ(readAll(fd.get()), "secret") << "the server must survive the refusal";
}

TEST(FdServiceTest, UnknownIdGetsAnErrorReplyAndTheServerSurvives) {
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("still here"));
  try {
    fetchFd(service->address(), reg.id() + 1000000);
    FAIL() << "an unknown id must not fetch anything";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::RemoteError);
    EXPECT_NE(std::string(e.what()).find("UnknownId"), std::string::npos) << e.what();
  }
  UniqueFd fd = fetchFd(service->address(), reg.id());
  EXPECT_EQ(readAll(fd.get()), "still here");
}

TEST(FdServiceTest, MalformedRequestIsAnsweredAndTheServerSurvives) {
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("ok"));
  UniqueFd sock = connectRaw(service->address());
  ASSERT_TRUE(sock.valid());
  FdServiceRequest garbage{0x12345678, 7, reg.id()};
  ASSERT_EQ(send(sock.get(), &garbage, sizeof(garbage), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(garbage)));
  UniqueFd fd;
  EXPECT_EQ(readReply(sock.get(), fd), FdServiceReply::BadRequest);
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(readAll(fetchFd(service->address(), reg.id()).get()), "ok");
}

TEST(FdServiceTest, ASilentClientDoesNotBlockOthers) {
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("ok"));
  UniqueFd silent = connectRaw(service->address());
  ASSERT_TRUE(silent.valid());
  char half[3] = {1, 2, 3};
  ASSERT_EQ(send(silent.get(), half, sizeof(half), MSG_NOSIGNAL), 3);
  EXPECT_EQ(readAll(fetchFd(service->address(), reg.id(), std::chrono::seconds(5)).get()), "ok");
}

TEST(FdServiceTest, ServesSeveralRequestsOnOneConnection) {
  auto service = FdService::acquire();
  FdService::Registration a = service->registerFd(memfdWith("a"));
  FdService::Registration b = service->registerFd(memfdWith("b"));
  UniqueFd sock = connectRaw(service->address());
  ASSERT_TRUE(sock.valid());
  for (const auto* reg : {&a, &b, &a}) {
    FdServiceRequest request{FdServiceRequest::kMagic, 0, reg->id()};
    ASSERT_EQ(send(sock.get(), &request, sizeof(request), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(request)));
    UniqueFd fd;
    ASSERT_EQ(readReply(sock.get(), fd), FdServiceReply::Ok);
    EXPECT_EQ(readAll(fd.get()), reg == &b ? "b" : "a");
  }
}

TEST(FdServiceTest, UnregisteringClosesTheFdAndStopsServingIt) {
  auto service = FdService::acquire();
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd readEnd(p[0]);
  FdService::Registration reg = service->registerFd(UniqueFd(p[1]));
  const uint64_t id = reg.id();
  EXPECT_EQ(service->registeredCount(), 1u);
  reg.reset();
  EXPECT_EQ(service->registeredCount(), 0u);
  char c;
  EXPECT_EQ(read(readEnd.get(), &c, 1), 0) << "the write end must be closed: EOF expected";
  EXPECT_THROW(fetchFd(service->address(), id), Error);
}

TEST(FdServiceTest, RegistrationsAreMoveOnlyAndUnregisterOnce) {
  auto service = FdService::acquire();
  FdService::Registration a = service->registerFd(memfdWith("x"));
  FdService::Registration b = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_TRUE(b.valid());
  EXPECT_EQ(service->registeredCount(), 1u);
  FdService::Registration c = service->registerFd(memfdWith("y"));
  c = std::move(b);  // drops c's own fd
  EXPECT_EQ(service->registeredCount(), 1u);
  EXPECT_EQ(readAll(fetchFd(service->address(), c.id()).get()), "x");
}

TEST(FdServiceTest, IdsAreNeverReused) {
  auto service = FdService::acquire();
  uint64_t first = service->registerFd(memfdWith("1")).id();
  uint64_t second = service->registerFd(memfdWith("2")).id();
  EXPECT_NE(first, second);
}

TEST(FdServiceTest, SharedByItsUsersAndStoppedByTheLastLeavingNoThreadOrFd) {
  const std::set<int> threadsBefore = test::threadIds();
  const int fdsBefore = test::openFdCount();
  auto first = FdService::acquire();
  auto second = FdService::acquire();
  EXPECT_EQ(first, second) << "one service per process";
  EXPECT_EQ(test::threadsAddedSince(threadsBefore).size(), 1u) << "the service runs one thread";
  const FdServiceAddress address = first->address();
  FdService::Registration reg = second->registerFd(memfdWith("alive"));
  first.reset();
  EXPECT_EQ(readAll(fetchFd(address, reg.id()).get()), "alive") << "dropping one user must not stop it";
  second.reset();
  EXPECT_EQ(readAll(fetchFd(address, reg.id()).get()), "alive") << "a registration is a user too";
  reg.reset();
  EXPECT_TRUE(test::newThreads(threadsBefore).empty()) << "the last user stopped the thread";
  EXPECT_EQ(test::openFdCount(), fdsBefore);
  try {
    fetchFd(address, 1);
    FAIL() << "a stopped service must not answer";
  } catch (const SysError& e) {
    EXPECT_NE(std::string(e.what()).find("no such service"), std::string::npos) << e.what();
  }
}

TEST(FdServiceTest, AddressNamesHostProcessAndNonce) {
  FdServiceAddress first;
  {
    auto service = FdService::acquire();
    first = service->address();
  }
  auto service = FdService::acquire();
  const FdServiceAddress& second = service->address();
  EXPECT_EQ(second.hostHash, getHostHash());
  EXPECT_EQ(second.processHash, getPidHash());
  EXPECT_EQ(second.pid, getpid());
  EXPECT_NE(second.nonce, first.nonce) << "a restarted service gets a new name";
  EXPECT_NE(fdServiceSocketName(first), fdServiceSocketName(second));
  FdServiceAddress otherNamespace = second;
  otherNamespace.processHash ^= 1;  // same pid in another PID namespace
  EXPECT_NE(fdServiceSocketName(otherNamespace), fdServiceSocketName(second));
}

TEST(FdServiceTest, FetchFromAnotherHostIsRefusedWithoutAnAttempt) {
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("x"));
  FdServiceAddress remote = service->address();
  remote.hostHash ^= 0x5a5a;
  try {
    fetchFd(remote, reg.id());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    EXPECT_NE(std::string(e.what()).find("another host"), std::string::npos) << e.what();
  }
}

TEST(FdServiceTest, FetchFromAServiceThatNeverAnswersTimesOut) {
  FdServiceAddress fake{getHostHash(), getPidHash(), 0xfffffff0u, static_cast<int32_t>(getpid())};
  UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  std::string name = fdServiceSocketName(fake);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(listener.get(), 4), 0);
  try {
    fetchFd(fake, 1, std::chrono::milliseconds(200));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::Timeout) << e.what();
  }
}

TEST(FdServiceTest, RegisteringAnInvalidFdIsRejected) {
  auto service = FdService::acquire();
  EXPECT_THROW(service->registerFd(UniqueFd()), Error);
}

TEST(FdServiceTest, AForkedChildDroppingItsInheritedCopyLeavesTheParentServing) {
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("parent"));
  const FdServiceAddress parentAddress = service->address();
  pid_t child = fork();
  if (child == 0) {
    // The child's copies of the parent's objects: dropping them must not touch the parent's thread.
    reg.reset();
    service.reset();
    try {
      auto own = FdService::acquire();
      if (own->address().pid != getpid()) _exit(1);
      FdService::Registration mine = own->registerFd(memfdWith("child"));
      _exit(readAll(fetchFd(own->address(), mine.id()).get()) == "child" ? 0 : 2);
    } catch (...) {
      _exit(3);
    }
  }
  EXPECT_EQ(waitChild(child), 0) << "1: inherited service reused, 2: wrong content, 3: threw";
  EXPECT_EQ(readAll(fetchFd(parentAddress, reg.id()).get()), "parent");
}

TEST(FdServiceTest, AnotherUserSquattingThePredictableNamesCannotKeepTheServiceFromStarting) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start a child under another uid";
  // Everything a name used to be made of is known to any local user: host hash, pid hash and a
  // counter. The child, as nobody, takes every such name for the first 256 counter values.
  const uint64_t hostHash = getHostHash(), pidHash = getPidHash();
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    close(done[1]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    std::vector<UniqueFd> squatted;
    for (unsigned instance = 0; instance <= 256; ++instance) {
      std::string name = "mscclpp-fd." + [](uint64_t v) {
        char b[17];
        std::snprintf(b, sizeof(b), "%016llx", static_cast<unsigned long long>(v));
        return std::string(b);
      }(hostHash) + "." + [](uint64_t v) {
        char b[17];
        std::snprintf(b, sizeof(b), "%016llx", static_cast<unsigned long long>(v));
        return std::string(b);
      }(pidHash) + "." + std::to_string(instance);
      UniqueFd sock(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un addr = {};
      addr.sun_family = AF_UNIX;
      std::memcpy(addr.sun_path + 1, name.data(), name.size());
      socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
      if (bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) _exit(11);
      squatted.push_back(std::move(sock));
    }
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(12);
    if (read(done[0], &c, 1) < 0) _exit(13);  // holds the names until the parent is done
    _exit(0);
  }
  close(ready[1]);
  close(done[0]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the squatter failed: " << waitChild(child);
  try {
    auto service = FdService::acquire();
    FdService::Registration reg = service->registerFd(memfdWith("mine"));
    EXPECT_EQ(readAll(fetchFd(service->address(), reg.id()).get()), "mine");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another user kept the fd service from starting: " << e.what();
  }
  close(done[1]);
  EXPECT_EQ(waitChild(child), 0);
  close(ready[0]);
}

TEST(FdServiceTest, ClientsThatClosedAreNotCountedAgainstTheLimit) {
  // 1024 clients connected at once (the limit), then 800 of them leave and 100 new ones arrive in
  // the same instant: every new one must be served, since only 324 are really connected.
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < 4096) GTEST_SKIP() << "needs 4096 descriptors, the hard limit is " << limit.rlim_max;
  const rlim_t saved = limit.rlim_cur;
  limit.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  {
    auto service = FdService::acquire();
    FdService::Registration reg = service->registerFd(memfdWith("served"));
    auto ask = [&](int sock, uint64_t id) {
      FdServiceRequest request{FdServiceRequest::kMagic, 0, id};
      if (send(sock, &request, sizeof(request), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(request))) return -1;
      UniqueFd fd;
      return readReply(sock, fd);
    };
    std::vector<UniqueFd> clients;
    for (int i = 0; i < 1024; ++i) {
      clients.push_back(connectRaw(service->address()));
      ASSERT_TRUE(clients.back().valid());
      // An answer means the service holds the client now.
      ASSERT_EQ(ask(clients.back().get(), reg.id() + 1000000), FdServiceReply::UnknownId) << "client " << i;
    }
    clients.erase(clients.begin(), clients.begin() + 800);
    std::vector<UniqueFd> late;
    for (int i = 0; i < 100; ++i) late.push_back(connectRaw(service->address()));
    int served = 0;
    for (auto& sock : late) served += sock.valid() && ask(sock.get(), reg.id()) == FdServiceReply::Ok;
    EXPECT_EQ(served, 100) << "clients were refused while only 324 were connected";
  }
  limit.rlim_cur = saved;
  setrlimit(RLIMIT_NOFILE, &limit);
}

// ---- what the service logs ----
//
// The process-wide logger is configured once, from the environment, so these scenarios run in a fresh
// process: this binary again, running FdServiceLogChild.DISABLED_Scenario with MSCCLPP_LOG_LEVEL=INFO
// and its log in a file of its own. The parent reads the file.

namespace {

// Runs `scenario` in a fresh process; returns its exit code and fills `log` with what it logged.
int runLoggedScenario(const std::string& scenario, std::string& log) {
  char dir[] = "/tmp/mscclpp_fd_log_XXXXXX";
  if (!mkdtemp(dir)) return -1;
  const std::string logPath = std::string(dir) + "/log.txt";
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("GTEST_", 0) == 0 || v.rfind("MSCCLPP_LOG", 0) == 0 || v.rfind("MSCCLPP_DEBUG", 0) == 0) continue;
    vars.push_back(v);
  }
  vars.push_back("MSCCLPP_LOG_LEVEL=INFO");
  vars.push_back("MSCCLPP_LOG_SUBSYS=MEM");
  vars.push_back("MSCCLPP_LOG_FILE=" + logPath);
  vars.push_back("MSCCLPP_FD_LOG_SCENARIO=" + scenario);
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe";
  std::string filter = "--gtest_filter=FdServiceLogChild.DISABLED_Scenario";
  std::string disabled = "--gtest_also_run_disabled_tests";
  std::vector<char*> argv{self.data(), filter.data(), disabled.data(), nullptr};
  pid_t pid = fork();
  if (pid == 0) {
    int devNull = open("/dev/null", O_WRONLY);
    dup2(devNull, STDOUT_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(112);
  }
  const int code = waitChild(pid);
  std::ifstream in(logPath);
  std::stringstream text;
  text << in.rdbuf();
  log = text.str();
  std::remove(logPath.c_str());
  rmdir(dir);
  return code;
}

std::vector<std::string> linesWith(const std::string& text, const std::string& part) {
  std::vector<std::string> found;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(part) != std::string::npos) found.push_back(line);
  }
  return found;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

bool sendAll(int sock, const void* data, size_t size) {
  return send(sock, data, size, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

// What importers do: one connection per fetch, closed once the fd has arrived. Every fetch but the
// last ends before the next one's reply is sent, so the service has seen those connections close by
// the time the last fetch returns (it handles waiting connections before new ones).
int normalFetches() {
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("normal"));
  for (int i = 0; i < 4; ++i) {
    if (readAll(fetchFd(service->address(), reg.id()).get()) != "normal") return 1;
  }
  // A client may also ask several times on one connection before closing it.
  UniqueFd sock = connectRaw(service->address());
  for (int i = 0; i < 2; ++i) {
    FdServiceRequest request{FdServiceRequest::kMagic, 0, reg.id()};
    UniqueFd fd;
    if (!sendAll(sock.get(), &request, sizeof(request)) || readReply(sock.get(), fd) != FdServiceReply::Ok) return 2;
  }
  sock.reset();
  return readAll(fetchFd(service->address(), reg.id()).get()) == "normal" ? 0 : 3;
}

// Clients that leave before finishing a request: one says nothing, one sends part of a request, one
// completes a request and then leaves in the middle of its second.
int misbehavingClients() {
  auto service = FdService::acquire();
  FdService::Registration reg = service->registerFd(memfdWith("served"));
  UniqueFd silent = connectRaw(service->address());
  UniqueFd partial = connectRaw(service->address());
  UniqueFd secondCutShort = connectRaw(service->address());
  if (!silent || !partial || !secondCutShort) return 1;
  const char three[3] = {1, 2, 3};
  if (!sendAll(partial.get(), three, sizeof(three))) return 2;
  FdServiceRequest request{FdServiceRequest::kMagic, 0, reg.id()};
  UniqueFd fd;
  if (!sendAll(secondCutShort.get(), &request, sizeof(request)) ||
      readReply(secondCutShort.get(), fd) != FdServiceReply::Ok)
    return 3;
  if (!sendAll(secondCutShort.get(), &request, 5)) return 4;
  silent.reset();
  partial.reset();
  secondCutShort.reset();
  return readAll(fetchFd(service->address(), reg.id()).get()) == "served" ? 0 : 5;
}

}  // namespace

TEST(FdServiceLogChild, DISABLED_Scenario) {
  const char* scenario = std::getenv("MSCCLPP_FD_LOG_SCENARIO");
  if (scenario == nullptr) GTEST_SKIP() << "runs only as the child of the fd service's log tests";
  int code = 100;
  try {
    code = std::string(scenario) == "normal" ? normalFetches() : misbehavingClients();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scenario threw: %s\n", e.what());
    code = 101;
  }
  std::fflush(stderr);
  _exit(code);
}

TEST(FdServiceLogTest, ClientsThatFetchAndLeaveAreNotReported) {
  std::string log;
  ASSERT_EQ(runLoggedScenario("normal", log), 0) << log;
  ASSERT_FALSE(linesWith(log, "fd service started").empty()) << "the scenario's log was not written:\n" << log;
  EXPECT_EQ(joined(linesWith(log, " WARN ")), "") << "a normal run must not warn";
  EXPECT_EQ(joined(linesWith(log, "dropped")), "");
}

TEST(FdServiceLogTest, ClientsThatLeaveMidRequestAreReportedAsWarnings) {
  std::string log;
  ASSERT_EQ(runLoggedScenario("misbehaving", log), 0) << log;
  const std::vector<std::string> drops = linesWith(log, "fd service: dropped a local client");
  EXPECT_EQ(drops.size(), 3u) << log;
  for (const auto& line : drops) EXPECT_NE(line.find(" WARN MEM "), std::string::npos) << line;
  const std::string all = joined(drops);
  EXPECT_NE(all.find("closed before completing its request (after 0 bytes)"), std::string::npos) << all;
  EXPECT_NE(all.find("closed before completing its request (after 3 bytes)"), std::string::npos) << all;
  EXPECT_NE(all.find("closed before completing its request (after 5 bytes)"), std::string::npos) << all;
}

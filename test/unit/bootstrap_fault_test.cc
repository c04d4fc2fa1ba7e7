// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// TcpBootstrap under faults, with real processes as ranks: a missing root, ranks killed during
// initialization and during a barrier, strangers connecting to the listening ports, and groups that
// disagree on nRanks or on who is which rank. mpirun would tear the whole job down when one rank dies,
// so the test forks its ranks itself.
//
// Each rank is this test binary again (fork + exec), running BootstrapFaultChild.DISABLED_Rank with its
// role in environment variables: a fresh process whose logger writes WARN lines to a file of its own.
// A rank reports on a pipe (fd 3) and takes "go" lines on stdin. A child left behind by a failing test
// is killed by the harness, and by the kernel if the test process itself dies (PR_SET_PDEATHSIG).

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mscclpp/core.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "bootstrap/tcp_bootstrap_impl.hpp"
#include "common/serialization.hpp"

extern char** environ;

using namespace mscclpp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kReportFd = 3;

std::string toHex(const UniqueId& id) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : id) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

UniqueId fromHex(const std::string& text) {
  UniqueId id{};
  for (size_t i = 0; i < id.size() && 2 * i + 1 < text.size(); ++i) {
    id[i] = static_cast<uint8_t>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

uint64_t magicOf(const UniqueId& id) {
  uint64_t magic;
  std::memcpy(&magic, id.data(), sizeof(magic));
  return magic;
}

SocketAddress rootOf(const UniqueId& id) {
  SocketAddress address;
  std::memcpy(&address, id.data() + sizeof(uint64_t), sizeof(address));
  return address;
}

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---- the child side ----

void report(const std::string& line) {
  std::string text = line + "\n";
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(kReportFd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The addresses this process listens on: its bootstrap's listener(s).
std::string listeningAddresses() {
  std::string out;
  for (int fd = 0; fd < 1024; ++fd) {
    int listening = 0;
    socklen_t len = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    SocketAddress address = emptySocketAddress();
    socklen_t alen = sizeof(address);
    if (getsockname(fd, &address.sa, &alen) == 0) out += " " + toString(address);
  }
  return out;
}

void waitForGo() {
  std::string line;
  char c;
  while (::read(STDIN_FILENO, &c, 1) == 1 && c != '\n') line += c;
}

// Runs the comma-separated actions of MSCCLPP_FAULT_SCRIPT as one rank, then reports "ok" or
// "error <code> <ms in the failing action> <message>".
int runRank() {
  const int rank = std::atoi(std::getenv("MSCCLPP_FAULT_RANK"));
  const int nRanks = std::atoi(std::getenv("MSCCLPP_FAULT_NRANKS"));
  const int64_t timeout = std::atoll(std::getenv("MSCCLPP_FAULT_TIMEOUT"));
  const UniqueId id = fromHex(std::getenv("MSCCLPP_FAULT_ID"));
  std::stringstream script(std::getenv("MSCCLPP_FAULT_SCRIPT"));
  std::string result = "ok";
  {
    TcpBootstrap bootstrap(rank, nRanks);
    std::string action;
    Clock::time_point start = Clock::now();
    try {
      while (std::getline(script, action, ',')) {
        start = Clock::now();
        if (action == "init") {
          bootstrap.initialize(id, timeout);
        } else if (action == "ready") {
          report("ready" + listeningAddresses());
        } else if (action == "wait") {
          waitForGo();
        } else if (action == "barrier") {
          bootstrap.barrier();
        } else if (action == "barriers") {
          while (true) bootstrap.barrier();
        } else if (action == "allgather") {
          std::vector<int> all(nRanks, -1);
          all[rank] = rank * 3;
          bootstrap.allGather(all.data(), sizeof(int));
          for (int r = 0; r < nRanks; ++r) {
            if (all[r] != r * 3) throw std::runtime_error("allGather returned wrong data");
          }
        } else if (action == "p2p") {
          int out = rank, in = -1;
          bootstrap.send(&out, sizeof(out), (rank + 1) % nRanks, 1);
          bootstrap.recv(&in, sizeof(in), (rank - 1 + nRanks) % nRanks, 1);
          if (in != (rank - 1 + nRanks) % nRanks) throw std::runtime_error("p2p returned wrong data");
        } else if (action == "hang") {
          while (true) pause();
        }
      }
    } catch (const Error& e) {
      result = "error " + errorToString(e.getErrorCode()) + " " +
               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()) +
               " " + e.what();
    } catch (const std::exception& e) {
      result = std::string("error Other 0 ") + e.what();
    }
  }
  report(result);
  return result == "ok" ? 0 : 1;
}

// ---- the parent side ----

struct Outcome {
  bool finished = false;
  std::string code;  // "ok" or an ErrorCode name
  std::string message;
  double secondsInAction = 0;
};

class Ranks {
 public:
  Ranks() {
    char dir[] = "/tmp/mscclpp_fault_XXXXXX";
    if (!mkdtemp(dir)) throw std::runtime_error("mkdtemp failed");
    dir_ = dir;
  }
  ~Ranks() {
    for (auto& [key, c] : children_) {
      if (c.pid > 0) {
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, nullptr, 0);
      }
      ::close(c.reportFd);
      ::close(c.commandFd);
    }
    // Failure messages quote the logs they need, so the directory goes in every case.
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') ::unlink((dir_ + "/" + e->d_name).c_str());
      }
      closedir(d);
    }
    ::rmdir(dir_.c_str());
  }

  /// Starts `rank` of `nRanks`; `key` names the process in this test (two processes may claim a rank).
  void start(const std::string& key, int rank, int nRanks, const UniqueId& id, int64_t timeoutSec,
             const std::string& script, const std::string& logLevel = "WARN") {
    std::vector<std::string> vars;
    for (char** e = environ; *e; ++e) {
      std::string v = *e;
      if (v.rfind("GTEST_", 0) == 0 || v.rfind("MSCCLPP_LOG", 0) == 0 || v.rfind("MSCCLPP_DEBUG", 0) == 0) continue;
      vars.push_back(v);
    }
    const std::string log = logPath(key);
    vars.push_back("MSCCLPP_LOG_LEVEL=" + logLevel);
    vars.push_back("MSCCLPP_LOG_SUBSYS=NET");
    vars.push_back("MSCCLPP_LOG_FILE=" + log);
    vars.push_back("MSCCLPP_FAULT_RANK=" + std::to_string(rank));
    vars.push_back("MSCCLPP_FAULT_NRANKS=" + std::to_string(nRanks));
    vars.push_back("MSCCLPP_FAULT_TIMEOUT=" + std::to_string(timeoutSec));
    vars.push_back("MSCCLPP_FAULT_ID=" + toHex(id));
    vars.push_back("MSCCLPP_FAULT_SCRIPT=" + script);
    std::vector<char*> envp;
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe";
    std::string filter = "--gtest_filter=BootstrapFaultChild.DISABLED_Rank";
    std::string disabled = "--gtest_also_run_disabled_tests";
    std::vector<char*> argv{self.data(), filter.data(), disabled.data(), nullptr};
    std::string out = dir_ + "/" + key + ".out";

    int reportPipe[2], commandPipe[2];
    ASSERT_EQ(::pipe2(reportPipe, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(commandPipe, O_CLOEXEC), 0);
    const pid_t parent = getpid();
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Only async-signal-safe calls until exec.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(111);
      int outFd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(commandPipe[0], STDIN_FILENO);
      dup2(outFd, STDOUT_FILENO);
      dup2(outFd, STDERR_FILENO);
      dup2(reportPipe[1], kReportFd);
      execve(argv[0], argv.data(), envp.data());
      _exit(112);
    }
    ::close(reportPipe[1]);
    ::close(commandPipe[0]);
    children_[key] = Child{pid, reportPipe[0], commandPipe[1], ""};
  }

  /// The next line the child reports, or nullopt if it says nothing before `limit` seconds pass.
  std::optional<std::string> readLine(const std::string& key, double limit) {
    Child& c = children_.at(key);
    auto until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(limit * 1000));
    while (true) {
      size_t eol = c.buffer.find('\n');
      if (eol != std::string::npos) {
        std::string line = c.buffer.substr(0, eol);
        c.buffer.erase(0, eol + 1);
        return line;
      }
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
      if (left <= 0) return std::nullopt;
      pollfd pfd{c.reportFd, POLLIN, 0};
      if (::poll(&pfd, 1, left) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(c.reportFd, buf, sizeof(buf));
      if (n <= 0) return std::nullopt;
      c.buffer.append(buf, n);
    }
  }

  /// Waits for the child's "ready <listening addresses>" line; returns the addresses.
  std::vector<std::string> ready(const std::string& key, double limit = 60) {
    auto line = readLine(key, limit);
    EXPECT_TRUE(line && line->rfind("ready", 0) == 0)
        << key << " never got ready: " << line.value_or("(nothing)") << "\n"
        << output(key);
    std::vector<std::string> addresses;
    std::stringstream words(line.value_or("").substr(std::min<size_t>(5, line.value_or("").size())));
    for (std::string w; words >> w;) addresses.push_back(w);
    return addresses;
  }

  void go(const std::string& key) { ASSERT_EQ(::write(children_.at(key).commandFd, "go\n", 3), 3); }

  /// The child's final report; the child is reaped (killed first if it does not finish in time).
  Outcome finish(const std::string& key, double limit) {
    Outcome outcome;
    auto line = readLine(key, limit);
    Child& c = children_.at(key);
    if (line) {
      outcome.finished = true;
      std::stringstream words(*line);
      std::string word;
      words >> word;
      if (word == "ok") {
        outcome.code = "ok";
      } else {
        words >> outcome.code >> outcome.secondsInAction;
        outcome.secondsInAction /= 1000.0;
        std::getline(words, outcome.message);
      }
    } else {
      ::kill(c.pid, SIGKILL);
    }
    ::waitpid(c.pid, nullptr, 0);
    c.pid = -1;
    return outcome;
  }

  void kill(const std::string& key) {
    Child& c = children_.at(key);
    ::kill(c.pid, SIGKILL);
    ::waitpid(c.pid, nullptr, 0);
    c.pid = -1;
  }

  /// Waits until the child's log contains `text`.
  bool waitForLog(const std::string& key, const std::string& text, double limit) {
    auto until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(limit * 1000));
    while (Clock::now() < until) {
      if (log(key).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  std::string log(const std::string& key) const {
    std::ifstream in(logPath(key));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string output(const std::string& key) const {
    std::ifstream in(dir_ + "/" + key + ".out");
    std::stringstream s;
    s << in.rdbuf();
    return "---- " + key + " log ----\n" + log(key) + "---- " + key + " output ----\n" + s.str();
  }

 private:
  struct Child {
    pid_t pid;
    int reportFd;
    int commandFd;
    std::string buffer;
  };
  std::string logPath(const std::string& key) const { return dir_ + "/" + key + ".log"; }

  std::string dir_;
  std::map<std::string, Child> children_;
};

std::string rankKey(int r) { return "rank" + std::to_string(r); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + part.size())) ++n;
  return n;
}

// Connects to `to` and sends `bytes` (possibly none); the connection stays open while the result lives.
TcpSocket strayClient(const SocketAddress& to, const std::vector<char>& bytes) {
  TcpSocket socket = TcpSocket::connect(to, Deadline::after(std::chrono::seconds(30)), "stray test client");
  if (!bytes.empty()) socket.sendAll(bytes.data(), bytes.size(), Deadline::after(std::chrono::seconds(10)));
  return socket;
}

std::vector<char> handshakeBytes(uint64_t magic, uint32_t kind, int32_t rank, int32_t tag) {
  ByteWriter w;
  w.put(magic).put(kind).put(rank).put(tag);
  return w.take();
}

std::vector<char> randomBytes(size_t n) {
  std::mt19937_64 gen(12345);
  std::vector<char> bytes(n);
  for (auto& b : bytes) b = static_cast<char>(gen());
  return bytes;
}

// Waits until the server side closes `socket` (it dropped the stray); false after `limit`.
bool closedByPeer(TcpSocket& socket, double limit) {
  char buf[64];
  auto deadline = Deadline::after(std::chrono::milliseconds(static_cast<int64_t>(limit * 1000)));
  try {
    while (true) socket.recvSome(buf, sizeof(buf), deadline);
  } catch (const Error& e) {
    return e.getErrorCode() == ErrorCode::Aborted;
  }
}

}  // namespace

TEST(BootstrapFaultChild, DISABLED_Rank) {
  if (!std::getenv("MSCCLPP_FAULT_SCRIPT")) GTEST_SKIP() << "runs only as a rank started by the fault tests";
  std::fflush(stdout);
  _exit(runRank());
}

TEST(BootstrapFaultTest, MissingRootMakesEveryRankTimeOutNamingIt) {
  // The id reserves its port without listening, so connections to it are refused: no root there.
  const UniqueId id = TcpBootstrap::createUniqueId();
  const std::string root = toString(rootOf(id));
  const int nRanks = 4;
  Ranks ranks;
  for (int r = 1; r < nRanks; ++r) ranks.start(rankKey(r), r, nRanks, id, 1, "init");
  for (int r = 1; r < nRanks; ++r) {
    Outcome o = ranks.finish(rankKey(r), 60);
    ASSERT_TRUE(o.finished) << ranks.output(rankKey(r));
    EXPECT_EQ(o.code, "Timeout") << o.message;
    EXPECT_TRUE(contains(o.message, "rank " + std::to_string(r) + ":")) << o.message;
    EXPECT_TRUE(contains(o.message, "rank 0")) << o.message;
    EXPECT_TRUE(contains(o.message, root)) << o.message;
    EXPECT_TRUE(contains(o.message, "timed out after 1 s")) << o.message;
    EXPECT_GE(o.secondsInAction, 0.9) << "gave up before its deadline";
    EXPECT_LE(o.secondsInAction, 1.0 + 5.0) << "overran its deadline";
  }
}

TEST(BootstrapFaultTest, RootTimeoutSaysHowManyRanksCheckedIn) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  const std::string root = toString(rootOf(id));
  Ranks ranks;
  ranks.start("rank1", 1, 4, id, 60, "init");
  ranks.start("rank0", 0, 4, id, 5, "init");
  Outcome o = ranks.finish("rank0", 60);
  ASSERT_TRUE(o.finished) << ranks.output("rank0");
  EXPECT_EQ(o.code, "Timeout") << o.message;
  EXPECT_TRUE(contains(o.message, "rank 0: timed out after 5 s waiting for 2 of 4 ranks to check in at " + root))
      << o.message;
  EXPECT_TRUE(contains(o.message, "(2 checked in; missing: 2, 3)")) << o.message;
  // Rank 0 tells the ranks that did check in, so they fail now instead of at their own deadline.
  Outcome other = ranks.finish("rank1", 30);
  ASSERT_TRUE(other.finished) << ranks.output("rank1");
  EXPECT_EQ(other.code, "Aborted") << other.message;
  EXPECT_TRUE(contains(other.message, "rank 0 abandoned initialization")) << other.message;
}

TEST(BootstrapFaultTest, RankKilledDuringInitMakesEveryOtherRankFail) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  const int nRanks = 4, timeout = 5, victim = 2;
  Ranks ranks;
  for (int r = 0; r < nRanks - 1; ++r) ranks.start(rankKey(r), r, nRanks, id, timeout, "init");
  // The victim has most likely checked in by now; the group is waiting for the last rank.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ranks.kill(rankKey(victim));
  auto killedAt = Clock::now();
  ranks.start(rankKey(nRanks - 1), nRanks - 1, nRanks, id, timeout, "init");
  for (int r = 0; r < nRanks; ++r) {
    if (r == victim) continue;
    Outcome o = ranks.finish(rankKey(r), timeout + 30);
    ASSERT_TRUE(o.finished) << ranks.output(rankKey(r));
    EXPECT_TRUE(o.code == "Aborted" || o.code == "Timeout") << rankKey(r) << ": " << o.code << " " << o.message;
    EXPECT_LE(secondsSince(killedAt), timeout + 5.0) << rankKey(r) << " hung past its deadline";
  }
}

TEST(BootstrapFaultTest, RankKilledDuringBarrierMakesEveryOtherRankFail) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  const int nRanks = 4, timeout = 10, victim = 2;
  Ranks ranks;
  for (int r = 0; r < nRanks; ++r) {
    ranks.start(rankKey(r), r, nRanks, id, timeout, r == victim ? "init,ready,hang" : "init,ready,wait,barriers");
  }
  for (int r = 0; r < nRanks; ++r) ranks.ready(rankKey(r));
  for (int r = 0; r < nRanks; ++r) {
    if (r != victim) ranks.go(rankKey(r));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the others are inside the barrier now
  ranks.kill(rankKey(victim));
  auto killedAt = Clock::now();
  for (int r = 0; r < nRanks; ++r) {
    if (r == victim) continue;
    Outcome o = ranks.finish(rankKey(r), timeout + 30);
    ASSERT_TRUE(o.finished) << ranks.output(rankKey(r));
    EXPECT_TRUE(o.code == "Aborted" || o.code == "Timeout") << rankKey(r) << ": " << o.code << " " << o.message;
    EXPECT_LE(secondsSince(killedAt), timeout + 5.0) << rankKey(r) << " hung past its deadline";
    // Whichever way the failure reached it, every rank names the one that died.
    EXPECT_TRUE(contains(o.message, "rank 2")) << o.message;
  }
}

TEST(BootstrapFaultTest, RankKilledWithoutATimeoutStillMakesEveryOtherRankFail) {
  // No deadline at all: only the failure spreading around the ring can end the barrier.
  const UniqueId id = TcpBootstrap::createUniqueId();
  const int nRanks = 4, victim = 1;
  Ranks ranks;
  for (int r = 0; r < nRanks; ++r) {
    ranks.start(rankKey(r), r, nRanks, id, -1, r == victim ? "init,ready,hang" : "init,ready,wait,barriers");
  }
  for (int r = 0; r < nRanks; ++r) ranks.ready(rankKey(r));
  for (int r = 0; r < nRanks; ++r) {
    if (r != victim) ranks.go(rankKey(r));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ranks.kill(rankKey(victim));
  for (int r = 0; r < nRanks; ++r) {
    if (r == victim) continue;
    Outcome o = ranks.finish(rankKey(r), 30);
    ASSERT_TRUE(o.finished) << rankKey(r) << " still blocked 30 s after rank " << victim << " died\n"
                            << ranks.output(rankKey(r));
    EXPECT_EQ(o.code, "Aborted") << o.message;
  }
}

TEST(BootstrapFaultTest, StrayClientsAtTheRootAddressAreDropped) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  const SocketAddress root = rootOf(id);
  const int nRanks = 3;
  const std::string script = "init,barrier,allgather,p2p,barrier";
  Ranks ranks;
  ranks.start("rank0", 0, nRanks, id, 30, script);
  // Each of these connects once rank 0 listens (the connect retries until then).
  TcpSocket wrongMagic = strayClient(root, handshakeBytes(magicOf(id) + 1, 1, 1, 0));
  TcpSocket garbage = strayClient(root, randomBytes(200));
  strayClient(root, {});  // connects and closes at once
  TcpSocket silent = strayClient(root, {});
  TcpSocket partial = strayClient(root, handshakeBytes(magicOf(id), 1, 1, 0));  // a check-in cut short
  EXPECT_TRUE(closedByPeer(wrongMagic, 30));
  EXPECT_TRUE(closedByPeer(garbage, 30));
  for (int r = 1; r < nRanks; ++r) ranks.start(rankKey(r), r, nRanks, id, 30, script);
  for (int r = 0; r < nRanks; ++r) {
    Outcome o = ranks.finish(rankKey(r), 90);
    EXPECT_EQ(o.code, "ok") << rankKey(r) << ": " << o.message << "\n" << ranks.output(rankKey(r));
  }
  const std::string log = ranks.log("rank0");
  EXPECT_TRUE(contains(log, "WARN NET")) << log;
  EXPECT_GE(std::count(log.begin(), log.end(), '\n'), 4) << log;
  EXPECT_TRUE(contains(log, "wrong magic")) << log;
  EXPECT_TRUE(contains(log, "closed before completing its check-in")) << log;
  EXPECT_TRUE(contains(log, "no complete check-in")) << log;
}

TEST(BootstrapFaultTest, StrayClientsAtARankListenerAreDroppedWhileTheJobRuns) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  const int nRanks = 3, target = 1;
  Ranks ranks;
  for (int r = 0; r < nRanks; ++r) {
    ranks.start(rankKey(r), r, nRanks, id, 30, "init,ready,wait,barrier,allgather,p2p,wait,barrier,p2p");
  }
  std::vector<std::string> listening;
  for (int r = 0; r < nRanks; ++r) {
    auto addresses = ranks.ready(rankKey(r));
    if (r == target) listening = addresses;
  }
  ASSERT_EQ(listening.size(), 1u) << "rank " << target << " should listen on exactly one address after initialize";
  const SocketAddress port = parseSocketAddress(listening[0]);

  TcpSocket wrongMagic = strayClient(port, handshakeBytes(magicOf(id) ^ 1, 2, 0, 1));
  TcpSocket garbage = strayClient(port, randomBytes(64));
  strayClient(port, {});  // connect and close
  TcpSocket silent = strayClient(port, {});
  TcpSocket badRank = strayClient(port, handshakeBytes(magicOf(id), 2, 99, 1));
  TcpSocket badKind = strayClient(port, handshakeBytes(magicOf(id), 1, 0, 0));

  // The job goes on while the silent client still holds its connection: new connections to the same
  // listener (the p2p step opens one) are not held up behind it.
  for (int r = 0; r < nRanks; ++r) ranks.go(rankKey(r));
  // The silent client is dropped after the handshake limit.
  EXPECT_TRUE(closedByPeer(silent, 30));
  for (int r = 0; r < nRanks; ++r) ranks.go(rankKey(r));
  for (int r = 0; r < nRanks; ++r) {
    Outcome o = ranks.finish(rankKey(r), 90);
    EXPECT_EQ(o.code, "ok") << rankKey(r) << ": " << o.message << "\n" << ranks.output(rankKey(r));
  }
  const std::string log = ranks.log(rankKey(target));
  EXPECT_TRUE(contains(log, "wrong magic")) << log;
  EXPECT_TRUE(contains(log, "closed before completing its handshake")) << log;
  EXPECT_TRUE(contains(log, "no handshake within")) << log;
  // The UniqueId's magic admits only check-ins at rank 0; a rank's listener wants the job's secret,
  // which only ranks that checked in know, so these are strangers too.
  EXPECT_GE(count(log, "wrong magic (not a member of this job)"), 3) << log;
}

TEST(BootstrapFaultTest, AForgedMessageFromAnOutsiderOfAnIpPortJobIsNotDelivered) {
  // An "ip:port" job: its check-in magic is the public constant, known to anyone.
  constexpr uint64_t kPublicMagic = 0xdeadbeef;
  TcpListener probe = TcpListener::listen(parseSocketAddress("127.0.0.1:0"));
  const SocketAddress root = probe.address();
  probe = TcpListener();
  UniqueId id{};
  std::memcpy(id.data(), &kPublicMagic, sizeof(kPublicMagic));
  std::memcpy(id.data() + sizeof(kPublicMagic), &root, sizeof(root));
  const int nRanks = 2;
  Ranks ranks;
  for (int r = 0; r < nRanks; ++r) ranks.start(rankKey(r), r, nRanks, id, 30, "init,ready,wait,p2p,barrier");
  std::vector<std::string> listening;
  for (int r = 0; r < nRanks; ++r) {
    auto addresses = ranks.ready(rankKey(r));
    if (r == 1) listening = addresses;
  }
  ASSERT_EQ(listening.size(), 1u);
  // An outsider claims to be rank 0 opening its data stream for tag 1, and sends a message on it.
  std::vector<char> forged = handshakeBytes(kPublicMagic, 2, 0, 1);
  const int32_t length = sizeof(int32_t), bogus = 77;
  forged.insert(forged.end(), reinterpret_cast<const char*>(&length), reinterpret_cast<const char*>(&length) + 4);
  forged.insert(forged.end(), reinterpret_cast<const char*>(&bogus), reinterpret_cast<const char*>(&bogus) + 4);
  TcpSocket outsider = strayClient(parseSocketAddress(listening[0]), forged);
  EXPECT_TRUE(closedByPeer(outsider, 10)) << "rank 1 kept a connection that does not carry the job's secret";
  for (int r = 0; r < nRanks; ++r) ranks.go(rankKey(r));
  // p2p fails with "wrong data" if rank 1 received the forged message instead of rank 0's.
  for (int r = 0; r < nRanks; ++r) {
    Outcome o = ranks.finish(rankKey(r), 60);
    EXPECT_EQ(o.code, "ok") << rankKey(r) << ": " << o.message << "\n" << ranks.output(rankKey(r));
  }
  EXPECT_TRUE(contains(ranks.log(rankKey(1)), "wrong magic (not a member of this job)")) << ranks.log(rankKey(1));
}

TEST(BootstrapFaultTest, NranksMismatchIsRejectedClearly) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  Ranks ranks;
  ranks.start("rank0", 0, 3, id, 30, "init", "DEBUG");
  ranks.start("rank1", 1, 3, id, 30, "init");
  ASSERT_TRUE(ranks.waitForLog("rank0", "rank 1 checked in", 30)) << ranks.output("rank0");
  ranks.start("rank2of4", 2, 4, id, 30, "init");
  Outcome root = ranks.finish("rank0", 60);
  EXPECT_EQ(root.code, "InvalidUsage") << root.message;
  EXPECT_TRUE(contains(root.message, "rank 2")) << root.message;
  EXPECT_TRUE(contains(root.message, "joined with nRanks 4, but rank 0 has nRanks 3")) << root.message;
  Outcome bad = ranks.finish("rank2of4", 60);
  EXPECT_EQ(bad.code, "InvalidUsage") << bad.message;
  EXPECT_TRUE(contains(bad.message, "rank 0 rejected this rank")) << bad.message;
  EXPECT_TRUE(contains(bad.message, "nRanks 4")) << bad.message;
  // The rank that did nothing wrong learns why the group failed, at once.
  Outcome innocent = ranks.finish("rank1", 60);
  EXPECT_EQ(innocent.code, "Aborted") << innocent.message;
  EXPECT_TRUE(contains(innocent.message, "rank 0 abandoned initialization")) << innocent.message;
  EXPECT_TRUE(contains(innocent.message, "nRanks 4")) << innocent.message;
}

TEST(BootstrapFaultTest, ACheckInAnnouncingAnAbsurdRankCountIsDroppedAndTheJobGoesOn) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  const SocketAddress root = rootOf(id);
  const int nRanks = 2;
  Ranks ranks;
  ranks.start("rank0", 0, nRanks, id, 30, "init,barrier,allgather");
  // A complete check-in as rank 1 with the job's magic, announcing 2^31 - 1 ranks.
  ByteWriter checkIn;
  const std::vector<char> handshake = handshakeBytes(magicOf(id), 1, 1, 0);
  checkIn.putBytes(handshake.data(), handshake.size());
  checkIn.put(std::numeric_limits<int32_t>::max()).put(emptySocketAddress()).put(uint64_t{42});
  TcpSocket absurd = strayClient(root, checkIn.take());
  EXPECT_TRUE(closedByPeer(absurd, 30)) << "rank 0 kept a check-in announcing 2^31 - 1 ranks";
  ranks.start("rank1", 1, nRanks, id, 30, "init,barrier,allgather");
  for (int r = 0; r < nRanks; ++r) {
    Outcome o = ranks.finish(rankKey(r), 60);
    EXPECT_EQ(o.code, "ok") << rankKey(r) << ": " << o.message << "\n" << ranks.output(rankKey(r));
  }
  const std::string log = ranks.log("rank0");
  EXPECT_TRUE(contains(log, "announces nRanks 2147483647, outside 1.." + std::to_string(tcp_bootstrap::kMaxRanks)))
      << log;
}

TEST(BootstrapFaultTest, DuplicateRankIsRejectedClearly) {
  const UniqueId id = TcpBootstrap::createUniqueId();
  Ranks ranks;
  ranks.start("rank0", 0, 3, id, 30, "init", "DEBUG");
  ranks.start("first1", 1, 3, id, 30, "init");
  ASSERT_TRUE(ranks.waitForLog("rank0", "rank 1 checked in", 30)) << ranks.output("rank0");
  ranks.start("second1", 1, 3, id, 30, "init");
  Outcome root = ranks.finish("rank0", 60);
  EXPECT_EQ(root.code, "InvalidUsage") << root.message;
  EXPECT_TRUE(contains(root.message, "rank 1 checked in twice")) << root.message;
  for (const char* key : {"first1", "second1"}) {
    Outcome o = ranks.finish(key, 60);
    EXPECT_EQ(o.code, "InvalidUsage") << key << ": " << o.message;
    EXPECT_TRUE(contains(o.message, "rank 1 checked in twice")) << key << ": " << o.message;
  }
}

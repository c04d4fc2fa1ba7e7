// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// A SUBSTITUTE verbs provider for tests: no RDMA hardware and no kernel module. It implements the
// functions of the IB transport's verbs table (src/transport/ib/ibv_table.hpp) in user space, between
// processes of one machine, and is loaded by pointing MSCCLPP_IBV_SO at this library.
//
// Model. Every process that opens a device runs a "NIC": a listener on the abstract Unix socket
// "\0mscclpp-ibv-substitute.<pid>". A GID encodes the owning process (fe80::<pid>:<device>:<port>), so
// moving a QP to RTR tells it which process the peer QP lives in; moving it to RTS connects a stream to
// that process, which a responder thread there serves on behalf of the peer QP. Per QP:
//   - post_send copies the work requests into the send queue (bounded by max_send_wr);
//   - a sender thread executes them in order: reads the local data (host memory in place, GPU memory
//     through cudaMemcpy) and sends request + payload;
//   - the responder in the target process checks rkey, range and access against its memory regions,
//     writes the data, performs fetch-add as a real 8-byte atomic on host memory, consumes a posted
//     receive for a write with immediate (waiting for one as RNR retries would), and answers;
//   - an ack thread turns answers into completions, in order (RC), writing fetched values back.
// Errors follow RC: a failed request completes with its status and moves the QP to ERR, after which
// outstanding and new work requests complete with IBV_WC_WR_FLUSH_ERR; a peer that disappears (stream
// closed) gives IBV_WC_RETRY_EXC_ERR, as a real HCA reports after its retries: for the oldest request in
// flight, or on an idle QP for the next request posted.
// Atomics on GPU memory are a read-modify-write through cudaMemcpy under one lock per process: atomic
// with respect to other RDMA atomics into that process, which is all InfiniBand promises by default.
//
// Configuration (environment, read once):
//   MSCCLPP_IBV_SUBSTITUTE_DEVICES  comma list of device names (default "substitute_0,substitute_1");
//                                   "none": an empty list; "enosys": NULL with errno ENOSYS.
//   MSCCLPP_IBV_SUBSTITUTE_PORTS    ports per device (default 1).
//   MSCCLPP_IBV_SUBSTITUTE_PORT_DOWN comma list of device:port reported DOWN.
//   MSCCLPP_IBV_SUBSTITUTE_ATOMICS  "0": devices report IBV_ATOMIC_NONE and refuse atomic requests.
//   MSCCLPP_IBV_SUBSTITUTE_DMABUF   "0": ibv_reg_dmabuf_mr fails with EOPNOTSUPP.
//   MSCCLPP_IBV_SUBSTITUTE_PEERMEM  "1": ibv_reg_mr accepts GPU memory (as with nvidia_peermem).
//   MSCCLPP_IBV_SUBSTITUTE_MAX_MSG  the ports' max_msg_sz in bytes (default 2^31).
// Fault injection: extern "C" int mscclppIbvSubstituteInject(const char* fault), found with dlsym:
//   "qp-error"             moves every QP of this process to ERR;
//   "fail-next-completion" the next work request executed here completes with IBV_WC_REM_OP_ERR.
// GID table: 4 entries per port; 0 and 1 are valid, 2 and 3 empty.

#include <cuda_runtime.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mscclpp/atomic_device.hpp>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/ib/ibv_table.hpp"

namespace {

constexpr int kGidTableLen = 4;
constexpr size_t kStagingBytes = 4 << 20;
constexpr std::chrono::seconds kRnrWait(10);

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool sendAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool recvAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string socketName(uint32_t pid) { return std::string(1, '\0') + "mscclpp-ibv-substitute." + std::to_string(pid); }

sockaddr_un socketAddress(uint32_t pid, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string name = socketName(pid);
  std::memcpy(addr.sun_path, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  return addr;
}

// ---------------------------------------------------------------------------------------------------
// Objects. Each embeds the verbs structure first, so the pointers the transport holds convert back.

struct Config {
  bool enosys = false;
  std::vector<std::string> devices;
  int ports = 1;
  std::vector<std::string> portsDown;
  bool atomics = true;
  bool dmabuf = true;
  bool peerMem = false;
  uint32_t maxMsg = 1u << 31;
};

struct SubMr {
  ibv_mr mr;
  bool gpu = false;
  int access = 0;
};

struct SubCq {
  ibv_cq cq;
  std::mutex mutex;
  std::deque<ibv_wc> entries;
  int capacity = 0;
  bool overrun = false;

  void push(const ibv_wc& wc) {
    std::lock_guard<std::mutex> lock(mutex);
    if (static_cast<int>(entries.size()) >= capacity) {
      overrun = true;
      return;
    }
    entries.push_back(wc);
  }
};

enum Op : uint32_t { kWrite = 1, kWriteImm = 2, kFetchAdd = 3 };

struct Request {
  uint32_t op;
  uint32_t len;
  uint64_t raddr;
  uint64_t add;
  uint32_t rkey;
  uint32_t imm;
};

struct Response {
  uint32_t status;
  uint32_t reserved;
  uint64_t value;
};

struct Hello {
  uint32_t dstQpn;
  uint32_t srcPid;
  uint32_t srcQpn;
};

struct SendWork {
  uint64_t seq;
  uint64_t wrId;
  ibv_wr_opcode opcode;
  bool signaled;
  uint64_t localAddr;
  uint32_t length;
  uint32_t lkey;
  uint64_t remoteAddr;
  uint32_t rkey;
  uint64_t add;
  uint32_t imm;
};

struct SubQp;

struct Fabric {
  Config config;
  std::vector<ibv_device> devices;
  std::shared_mutex mrMutex;
  std::map<uint32_t, SubMr*> mrs;  // by key (lkey == rkey)
  uint32_t nextKey = 0x100;
  std::mutex qpMutex;
  std::map<uint32_t, std::shared_ptr<SubQp>> qps;
  uint32_t nextQpn = 0x40;
  std::once_flag listenOnce;
  int listenFd = -1;
  std::mutex gpuAtomicMutex;
  std::atomic<bool> failNextCompletion{false};
};

// Never destroyed: its threads (the listener, responders) may run until the process exits.
Fabric& fabric() {
  static Fabric* f = [] {
    auto* fab = new Fabric;
    Config& c = fab->config;
    std::string devs = envOr("MSCCLPP_IBV_SUBSTITUTE_DEVICES", "substitute_0,substitute_1");
    if (devs == "enosys") {
      c.enosys = true;
    } else if (devs != "none") {
      c.devices = split(devs);
    }
    c.ports = std::max(1, std::atoi(envOr("MSCCLPP_IBV_SUBSTITUTE_PORTS", "1").c_str()));
    c.portsDown = split(envOr("MSCCLPP_IBV_SUBSTITUTE_PORT_DOWN", ""));
    c.atomics = envOr("MSCCLPP_IBV_SUBSTITUTE_ATOMICS", "1") != "0";
    c.dmabuf = envOr("MSCCLPP_IBV_SUBSTITUTE_DMABUF", "1") != "0";
    c.peerMem = envOr("MSCCLPP_IBV_SUBSTITUTE_PEERMEM", "0") == "1";
    c.maxMsg =
        static_cast<uint32_t>(std::strtoul(envOr("MSCCLPP_IBV_SUBSTITUTE_MAX_MSG", "2147483648").c_str(), nullptr, 10));
    fab->devices.resize(c.devices.size());
    for (size_t i = 0; i < c.devices.size(); ++i) {
      std::snprintf(fab->devices[i].name, sizeof(fab->devices[i].name), "%s", c.devices[i].c_str());
      fab->devices[i].transport_type = IBV_TRANSPORT_IB;
      fab->devices[i].node_type = IBV_NODE_CA;
    }
    return fab;
  }();
  return *f;
}

struct SubContext {
  ibv_context context;
  int device = 0;
};

int deviceIndexOf(ibv_context* c) { return reinterpret_cast<SubContext*>(c)->device; }

bool portDown(int device, int port) {
  const Fabric& f = fabric();
  std::string key = f.config.devices[device] + ":" + std::to_string(port);
  for (const auto& d : f.config.portsDown) {
    if (d == key) return true;
  }
  return false;
}

/// Copies between memory of this process, host or GPU.
void copyMemory(void* dst, const void* src, size_t size, bool dstGpu, bool srcGpu) {
  if (!dstGpu && !srcGpu) {
    std::memcpy(dst, src, size);
    return;
  }
  cudaMemcpy(dst, src, size, cudaMemcpyDefault);
}

/// What the transport holds: the verbs QP first, then its owner.
struct QpHandle {
  ibv_qp qp;
  SubQp* owner;
};

struct SubQp : std::enable_shared_from_this<SubQp> {
  QpHandle handle{{}, this};
  ibv_qp& qp = handle.qp;
  SubCq* sendCq = nullptr;
  SubCq* recvCq = nullptr;
  uint32_t maxSendWr = 0;
  uint32_t maxRecvWr = 0;
  int device = 0;

  std::mutex mutex;
  std::condition_variable cv;
  ibv_qp_state state = IBV_QPS_RESET;
  bool destroying = false;
  bool peerGone = false;  // the peer's process closed the stream; the next request goes unanswered
  uint32_t remotePid = 0;
  uint32_t remoteQpn = 0;
  int fd = -1;  // the stream to the peer's process (requests out, answers in)
  uint64_t nextSeq = 0;
  std::deque<SendWork> queued;    // posted, not yet sent
  std::deque<SendWork> inFlight;  // sent, not yet answered
  std::deque<uint64_t> recvs;     // posted receives (wr_ids)
  std::vector<int> incomingFds;   // streams of peers into this QP
  std::vector<std::thread> responders;
  std::thread sender;
  std::thread acker;

  ibv_wc completion(const SendWork& w, ibv_wc_status status) const {
    ibv_wc wc{};
    wc.wr_id = w.wrId;
    wc.status = status;
    switch (w.opcode) {
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
        wc.opcode = IBV_WC_FETCH_ADD;
        break;
      default:
        wc.opcode = IBV_WC_RDMA_WRITE;
        break;
    }
    wc.qp_num = qp.qp_num;
    wc.byte_len = w.length;
    return wc;
  }

  /// RC error handling (under `mutex`): everything not yet completed is flushed.
  void enterErrorLocked() {
    if (state == IBV_QPS_ERR) return;
    state = IBV_QPS_ERR;
    for (const auto& w : inFlight) sendCq->push(completion(w, IBV_WC_WR_FLUSH_ERR));
    for (const auto& w : queued) sendCq->push(completion(w, IBV_WC_WR_FLUSH_ERR));
    inFlight.clear();
    queued.clear();
    for (uint64_t id : recvs) {
      ibv_wc wc{};
      wc.wr_id = id;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.opcode = IBV_WC_RECV;
      wc.qp_num = qp.qp_num;
      recvCq->push(wc);
    }
    recvs.clear();
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    cv.notify_all();
  }

  /// Completes the oldest in-flight work request with `status` (under `mutex`).
  void failLocked(const SendWork& w, ibv_wc_status status) {
    sendCq->push(completion(w, status));
    enterErrorLocked();
  }

  void senderLoop();
  void ackLoop();
  void respond(int inFd);
};

SubMr* findMr(uint32_t key) {
  auto& mrs = fabric().mrs;
  auto it = mrs.find(key);
  return it == mrs.end() ? nullptr : it->second;
}

bool inside(const SubMr* mr, uint64_t addr, uint64_t len) {
  const uint64_t base = reinterpret_cast<uint64_t>(mr->mr.addr);
  return addr >= base && len <= mr->mr.length && addr - base <= mr->mr.length - len;
}

void SubQp::senderLoop() {
  std::vector<char> staging;
  for (;;) {
    SendWork w;
    {
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait(lock, [&] { return destroying || (!queued.empty() && state == IBV_QPS_RTS); });
      if (destroying) return;
      w = queued.front();
      queued.pop_front();
      inFlight.push_back(w);
    }
    Request req{};
    req.len = w.length;
    req.raddr = w.remoteAddr;
    req.rkey = w.rkey;
    req.add = w.add;
    req.imm = w.imm;
    req.op = w.opcode == IBV_WR_RDMA_WRITE ? kWrite : w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? kWriteImm : kFetchAdd;
    bool localOk = true;
    bool sent = false;
    bool gone = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      gone = peerGone;
    }
    {
      std::shared_lock<std::shared_mutex> mrLock(fabric().mrMutex);
      SubMr* mr = w.length > 0 ? findMr(w.lkey) : nullptr;
      if (w.length > 0 && (mr == nullptr || !inside(mr, w.localAddr, w.length))) {
        localOk = false;
      } else if (!gone && sendAll(fd, &req, sizeof(req))) {
        sent = true;
        if (req.op != kFetchAdd && w.length > 0) {
          if (!mr->gpu) {
            sent = sendAll(fd, reinterpret_cast<void*>(w.localAddr), w.length);
          } else {
            staging.resize(kStagingBytes);
            for (uint64_t off = 0; sent && off < w.length; off += kStagingBytes) {
              size_t n = std::min<uint64_t>(kStagingBytes, w.length - off);
              copyMemory(staging.data(), reinterpret_cast<void*>(w.localAddr + off), n, false, true);
              sent = sendAll(fd, staging.data(), n);
            }
          }
        }
      }
    }
    if (localOk && sent) continue;
    std::unique_lock<std::mutex> lock(mutex);
    if (!localOk) {
      // Completions come in order: the requests before this one complete first.
      cv.wait(lock, [&] { return destroying || state == IBV_QPS_ERR || inFlight.front().seq == w.seq; });
      if (destroying || state == IBV_QPS_ERR) continue;
      inFlight.pop_front();
      failLocked(w, IBV_WC_LOC_PROT_ERR);
      continue;
    }
    if (destroying || state == IBV_QPS_ERR || inFlight.empty()) continue;
    // The peer is gone: the oldest request fails as unanswered, the rest is flushed.
    SendWork oldest = inFlight.front();
    inFlight.pop_front();
    failLocked(oldest, IBV_WC_RETRY_EXC_ERR);
  }
}

void SubQp::ackLoop() {
  for (;;) {
    Response resp{};
    bool ok = recvAll(fd, &resp, sizeof(resp));
    std::lock_guard<std::mutex> lock(mutex);
    if (destroying) return;
    if (!ok) {
      // The peer's process closed the stream (exited or was killed): what was in flight will never be
      // answered, which a real HCA reports as exhausted retries. With nothing in flight a real QP does
      // not notice yet: it stays in RTS, and its next request is the one that exhausts its retries.
      peerGone = true;
      if (!inFlight.empty()) {
        SendWork w = inFlight.front();
        inFlight.pop_front();
        failLocked(w, IBV_WC_RETRY_EXC_ERR);
      }
      cv.notify_all();
      return;
    }
    if (inFlight.empty()) continue;  // flushed already
    SendWork w = inFlight.front();
    inFlight.pop_front();
    cv.notify_all();
    ibv_wc_status status = static_cast<ibv_wc_status>(resp.status);
    if (status == IBV_WC_SUCCESS && fabric().failNextCompletion.exchange(false)) status = IBV_WC_REM_OP_ERR;
    if (status != IBV_WC_SUCCESS) {
      failLocked(w, status);
      continue;
    }
    if (w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
      std::shared_lock<std::shared_mutex> mrLock(fabric().mrMutex);
      SubMr* mr = findMr(w.lkey);
      if (mr == nullptr || !inside(mr, w.localAddr, sizeof(uint64_t))) {
        failLocked(w, IBV_WC_LOC_PROT_ERR);
        continue;
      }
      copyMemory(reinterpret_cast<void*>(w.localAddr), &resp.value, sizeof(uint64_t), mr->gpu, false);
    }
    if (w.signaled) sendCq->push(completion(w, IBV_WC_SUCCESS));
  }
}

/// Serves one peer's stream into this QP: the responder side of RC.
void SubQp::respond(int inFd) {
  std::vector<char> staging;
  Request req{};
  while (recvAll(inFd, &req, sizeof(req))) {
    Response resp{};
    resp.status = IBV_WC_SUCCESS;
    const uint64_t payload = req.op == kFetchAdd ? 0 : req.len;
    bool drained = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      // A responder in ERR drops requests; the requester sees no answer, i.e. exhausted retries.
      if (state == IBV_QPS_ERR || destroying) resp.status = IBV_WC_RETRY_EXC_ERR;
    }
    if (resp.status == IBV_WC_SUCCESS) {
      std::shared_lock<std::shared_mutex> mrLock(fabric().mrMutex);
      SubMr* mr = findMr(req.rkey);
      const int need = req.op == kFetchAdd ? IBV_ACCESS_REMOTE_ATOMIC : IBV_ACCESS_REMOTE_WRITE;
      const uint64_t len = req.op == kFetchAdd ? sizeof(uint64_t) : req.len;
      if (mr == nullptr || !(mr->access & need) || (len > 0 && !inside(mr, req.raddr, len))) {
        resp.status = IBV_WC_REM_ACCESS_ERR;
      } else if (req.op == kFetchAdd) {
        if (!fabric().config.atomics || req.raddr % sizeof(uint64_t) != 0) {
          resp.status = IBV_WC_REM_INV_REQ_ERR;
        } else if (!mr->gpu) {
          resp.value =
              mscclpp::atomicFetchAdd(reinterpret_cast<uint64_t*>(req.raddr), req.add, mscclpp::memoryOrderSeqCst);
        } else {
          std::lock_guard<std::mutex> atomicLock(fabric().gpuAtomicMutex);
          uint64_t v = 0;
          copyMemory(&v, reinterpret_cast<void*>(req.raddr), sizeof(v), false, true);
          resp.value = v;
          v += req.add;
          copyMemory(reinterpret_cast<void*>(req.raddr), &v, sizeof(v), true, false);
        }
      } else if (!mr->gpu && req.len == sizeof(uint64_t) && req.raddr % sizeof(uint64_t) == 0) {
        // A whole aligned word lands in one store, so a host waiter never sees it torn.
        uint64_t v = 0;
        if (!recvAll(inFd, &v, sizeof(v))) return;
        mscclpp::atomicStore(reinterpret_cast<uint64_t*>(req.raddr), v, mscclpp::memoryOrderSeqCst);
        drained = true;
      } else if (!mr->gpu) {
        if (!recvAll(inFd, reinterpret_cast<void*>(req.raddr), req.len)) return;
        drained = true;
      } else {
        staging.resize(kStagingBytes);
        for (uint64_t off = 0; off < req.len; off += kStagingBytes) {
          size_t n = std::min<uint64_t>(kStagingBytes, req.len - off);
          if (!recvAll(inFd, staging.data(), n)) return;
          copyMemory(reinterpret_cast<void*>(req.raddr + off), staging.data(), n, true, false);
        }
        drained = true;
      }
    }
    if (!drained && payload > 0) {
      staging.resize(kStagingBytes);
      for (uint64_t off = 0; off < payload; off += kStagingBytes) {
        if (!recvAll(inFd, staging.data(), std::min<uint64_t>(kStagingBytes, payload - off))) return;
      }
    }
    if (resp.status == IBV_WC_SUCCESS && req.op == kWriteImm) {
      std::unique_lock<std::mutex> lock(mutex);
      // As RNR retries would: wait for the receiver to post a receive.
      if (!cv.wait_for(lock, kRnrWait, [&] { return destroying || state == IBV_QPS_ERR || !recvs.empty(); }) ||
          recvs.empty()) {
        resp.status = IBV_WC_RNR_RETRY_EXC_ERR;
      } else {
        ibv_wc wc{};
        wc.wr_id = recvs.front();
        recvs.pop_front();
        wc.status = IBV_WC_SUCCESS;
        wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
        wc.wc_flags = IBV_WC_WITH_IMM;
        wc.imm_data = req.imm;
        wc.qp_num = qp.qp_num;
        recvCq->push(wc);
      }
    }
    if (!sendAll(inFd, &resp, sizeof(resp))) return;
  }
}

void listenerLoop(int listenFd) {
  for (;;) {
    int fd = ::accept(listenFd, nullptr, nullptr);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    Hello hello{};
    if (!recvAll(fd, &hello, sizeof(hello))) {
      ::close(fd);
      continue;
    }
    std::shared_ptr<SubQp> qp;
    {
      std::lock_guard<std::mutex> lock(fabric().qpMutex);
      auto it = fabric().qps.find(hello.dstQpn);
      if (it != fabric().qps.end()) qp = it->second;
    }
    if (!qp) {
      ::close(fd);
      continue;
    }
    std::lock_guard<std::mutex> lock(qp->mutex);
    if (qp->destroying) {
      ::close(fd);
      continue;
    }
    qp->incomingFds.push_back(fd);
    SubQp* raw = qp.get();
    qp->responders.emplace_back([raw, fd] { raw->respond(fd); });
  }
}

void startListener() {
  std::call_once(fabric().listenOnce, [] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    sockaddr_un addr = socketAddress(static_cast<uint32_t>(::getpid()), &len);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 128) != 0) {
      std::fprintf(stderr, "ibv substitute: cannot listen: %s\n", std::strerror(errno));
      if (fd >= 0) ::close(fd);
      return;
    }
    fabric().listenFd = fd;
    std::thread(listenerLoop, fd).detach();
  });
}

// ---------------------------------------------------------------------------------------------------
// The verbs.

ibv_device** getDeviceList(int* num) {
  Fabric& f = fabric();
  if (f.config.enosys) {
    errno = ENOSYS;
    if (num) *num = 0;
    return nullptr;
  }
  auto** list = static_cast<ibv_device**>(std::calloc(f.devices.size() + 1, sizeof(ibv_device*)));
  for (size_t i = 0; i < f.devices.size(); ++i) list[i] = &f.devices[i];
  if (num) *num = static_cast<int>(f.devices.size());
  return list;
}

void freeDeviceList(ibv_device** list) { std::free(list); }

const char* getDeviceName(ibv_device* device) { return device->name; }

ibv_context* openDevice(ibv_device* device) {
  Fabric& f = fabric();
  startListener();
  if (f.listenFd < 0) {
    errno = EIO;
    return nullptr;
  }
  auto* c = new SubContext{};
  c->context.device = device;
  c->device = static_cast<int>(device - f.devices.data());
  return &c->context;
}

int closeDevice(ibv_context* context) {
  delete reinterpret_cast<SubContext*>(context);
  return 0;
}

int queryDevice(ibv_context* context, ibv_device_attr* attr) {
  std::memset(attr, 0, sizeof(*attr));
  attr->phys_port_cnt = static_cast<uint8_t>(fabric().config.ports);
  attr->max_cqe = 65536;
  attr->max_qp_wr = 32768;
  attr->max_qp = 1 << 16;
  attr->max_cq = 1 << 16;
  attr->max_mr = 1 << 20;
  attr->max_pd = 1 << 10;
  attr->max_sge = 1;
  attr->max_mr_size = ~0ULL;
  attr->max_qp_rd_atom = 16;
  attr->max_qp_init_rd_atom = 16;
  attr->atomic_cap = fabric().config.atomics ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE;
  attr->vendor_id = 0;
  std::snprintf(attr->fw_ver, sizeof(attr->fw_ver), "substitute");
  return 0;
}

int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) {
  if (port < 1 || port > fabric().config.ports) return EINVAL;
  std::memset(attr, 0, sizeof(*attr));
  attr->state = portDown(deviceIndexOf(context), port) ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_4096;
  attr->gid_tbl_len = kGidTableLen;
  attr->max_msg_sz = fabric().config.maxMsg;
  attr->lid = 0;
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;
  return 0;
}

int queryGid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  if (port < 1 || port > fabric().config.ports || index < 0 || index >= kGidTableLen) return EINVAL;
  std::memset(gid, 0, sizeof(*gid));
  if (index >= 2) return 0;
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  gid->raw[0] = 0xfe;
  gid->raw[1] = 0x80;
  gid->raw[7] = static_cast<uint8_t>(index);
  std::memcpy(&gid->raw[8], &pid, sizeof(pid));
  gid->raw[12] = static_cast<uint8_t>(deviceIndexOf(context));
  gid->raw[13] = port;
  return 0;
}

ibv_pd* allocPd(ibv_context* context) {
  auto* pd = new ibv_pd{};
  pd->context = context;
  return pd;
}

int deallocPd(ibv_pd* pd) {
  delete pd;
  return 0;
}

bool isGpuMemory(const void* addr) {
  cudaPointerAttributes attrs{};
  if (cudaPointerGetAttributes(&attrs, addr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attrs.type == cudaMemoryTypeDevice;
}

ibv_mr* registerRegion(ibv_pd* pd, void* addr, size_t length, int access, bool gpu) {
  Fabric& f = fabric();
  auto* mr = new SubMr{};
  mr->gpu = gpu;
  mr->access = access;
  mr->mr.context = pd->context;
  mr->mr.pd = pd;
  mr->mr.addr = addr;
  mr->mr.length = length;
  std::unique_lock<std::shared_mutex> lock(f.mrMutex);
  mr->mr.lkey = mr->mr.rkey = f.nextKey++;
  f.mrs[mr->mr.lkey] = mr;
  return &mr->mr;
}

ibv_mr* regMr(ibv_pd* pd, void* addr, size_t length, int access) {
  if (addr == nullptr || length == 0) {
    errno = EINVAL;
    return nullptr;
  }
  const bool gpu = isGpuMemory(addr);
  if (gpu && !fabric().config.peerMem) {
    // What the kernel answers for GPU memory it cannot pin without a peer-memory client.
    errno = EFAULT;
    return nullptr;
  }
  return registerRegion(pd, addr, length, access, gpu);
}

ibv_mr* regDmabufMr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access) {
  struct stat st {};
  if (!fabric().config.dmabuf) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  if (length == 0 || ::fstat(fd, &st) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return registerRegion(pd, reinterpret_cast<void*>(iova), length, access, true);
}

int deregMr(ibv_mr* mr) {
  Fabric& f = fabric();
  std::unique_lock<std::shared_mutex> lock(f.mrMutex);
  auto it = f.mrs.find(mr->lkey);
  if (it == f.mrs.end()) return EINVAL;
  delete it->second;
  f.mrs.erase(it);
  return 0;
}

ibv_cq* createCq(ibv_context* context, int cqe, void*, ibv_comp_channel*, int) {
  if (cqe <= 0 || cqe > 65536) {
    errno = EINVAL;
    return nullptr;
  }
  auto* cq = new SubCq{};
  cq->cq.context = context;
  cq->cq.cqe = cqe;
  cq->capacity = cqe;
  return &cq->cq;
}

int destroyCq(ibv_cq* cq) {
  delete reinterpret_cast<SubCq*>(cq);
  return 0;
}

int pollCq(ibv_cq* cq, int num, ibv_wc* wc) {
  auto* c = reinterpret_cast<SubCq*>(cq);
  std::lock_guard<std::mutex> lock(c->mutex);
  if (c->overrun) return -1;
  int n = 0;
  while (n < num && !c->entries.empty()) {
    wc[n++] = c->entries.front();
    c->entries.pop_front();
  }
  return n;
}

SubQp* subQp(ibv_qp* qp) { return reinterpret_cast<QpHandle*>(qp)->owner; }

ibv_qp* createQp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  if (attr->qp_type != IBV_QPT_RC || attr->send_cq == nullptr || attr->recv_cq == nullptr ||
      attr->cap.max_send_sge > 1 || attr->cap.max_recv_sge > 1) {
    errno = EINVAL;
    return nullptr;
  }
  Fabric& f = fabric();
  auto qp = std::make_shared<SubQp>();
  qp->qp.context = pd->context;
  qp->qp.pd = pd;
  qp->qp.send_cq = attr->send_cq;
  qp->qp.recv_cq = attr->recv_cq;
  qp->qp.qp_type = IBV_QPT_RC;
  qp->qp.state = IBV_QPS_RESET;
  qp->sendCq = reinterpret_cast<SubCq*>(attr->send_cq);
  qp->recvCq = reinterpret_cast<SubCq*>(attr->recv_cq);
  qp->maxSendWr = attr->cap.max_send_wr;
  qp->maxRecvWr = attr->cap.max_recv_wr;
  qp->device = deviceIndexOf(pd->context);
  std::lock_guard<std::mutex> lock(f.qpMutex);
  qp->qp.qp_num = f.nextQpn++;
  f.qps[qp->qp.qp_num] = qp;
  return &qp->qp;
}

int modifyQp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask) {
  SubQp* qp = subQp(ibqp);
  if (!(mask & IBV_QP_STATE)) return EINVAL;
  std::unique_lock<std::mutex> lock(qp->mutex);
  const ibv_qp_state from = qp->state, to = attr->qp_state;
  if (to == IBV_QPS_ERR) {
    qp->enterErrorLocked();
    qp->qp.state = qp->state;
    return 0;
  }
  if (to == IBV_QPS_INIT && from == IBV_QPS_RESET) {
    if (attr->port_num < 1 || attr->port_num > fabric().config.ports) return EINVAL;
  } else if (to == IBV_QPS_RTR && from == IBV_QPS_INIT) {
    if (!(mask & IBV_QP_AV) || !(mask & IBV_QP_DEST_QPN) || !attr->ah_attr.is_global) return EINVAL;
    const uint8_t* raw = attr->ah_attr.grh.dgid.raw;
    if (raw[0] != 0xfe || raw[1] != 0x80) return EINVAL;  // not a GID of this fabric
    std::memcpy(&qp->remotePid, &raw[8], sizeof(qp->remotePid));
    qp->remoteQpn = attr->dest_qp_num;
  } else if (to == IBV_QPS_RTS && from == IBV_QPS_RTR) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t len = 0;
    sockaddr_un addr = socketAddress(qp->remotePid, &len);
    Hello hello{qp->remoteQpn, static_cast<uint32_t>(::getpid()), qp->qp.qp_num};
    // A peer process that is gone still leaves the QP in RTS; its requests then fail as unanswered.
    if (fd >= 0 &&
        (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || !sendAll(fd, &hello, sizeof(hello)))) {
      ::shutdown(fd, SHUT_RDWR);
    }
    qp->fd = fd;
    SubQp* raw = qp;
    qp->sender = std::thread([raw] { raw->senderLoop(); });
    qp->acker = std::thread([raw] { raw->ackLoop(); });
  } else {
    return EINVAL;
  }
  qp->state = to;
  qp->qp.state = to;
  qp->cv.notify_all();
  return 0;
}

int destroyQp(ibv_qp* ibqp) {
  SubQp* qp = subQp(ibqp);
  std::shared_ptr<SubQp> keep;
  {
    std::lock_guard<std::mutex> lock(fabric().qpMutex);
    auto it = fabric().qps.find(ibqp->qp_num);
    if (it == fabric().qps.end()) return EINVAL;
    keep = it->second;
    fabric().qps.erase(it);
  }
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(qp->mutex);
    qp->destroying = true;
    if (qp->fd >= 0) ::shutdown(qp->fd, SHUT_RDWR);
    for (int fd : qp->incomingFds) ::shutdown(fd, SHUT_RDWR);
    qp->cv.notify_all();
    threads = std::move(qp->responders);
  }
  if (qp->sender.joinable()) qp->sender.join();
  if (qp->acker.joinable()) qp->acker.join();
  for (auto& t : threads) t.join();
  if (qp->fd >= 0) ::close(qp->fd);
  for (int fd : qp->incomingFds) ::close(fd);
  return 0;
}

int postSend(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad) {
  SubQp* qp = subQp(ibqp);
  std::lock_guard<std::mutex> lock(qp->mutex);
  if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR) {
    *bad = wr;
    return EINVAL;
  }
  for (; wr != nullptr; wr = wr->next) {
    const bool atomic = wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
    const bool supported = wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || atomic;
    if (!supported || wr->num_sge > 1 || (atomic && (wr->num_sge != 1 || wr->sg_list[0].length != 8)) ||
        (atomic && !fabric().config.atomics)) {
      *bad = wr;
      return EINVAL;
    }
    if (qp->queued.size() + qp->inFlight.size() >= qp->maxSendWr) {
      *bad = wr;
      return ENOMEM;
    }
    SendWork w{};
    w.seq = qp->nextSeq++;
    w.wrId = wr->wr_id;
    w.opcode = wr->opcode;
    w.signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
    if (wr->num_sge == 1) {
      w.localAddr = wr->sg_list[0].addr;
      w.length = wr->sg_list[0].length;
      w.lkey = wr->sg_list[0].lkey;
    }
    if (atomic) {
      w.remoteAddr = wr->wr.atomic.remote_addr;
      w.rkey = wr->wr.atomic.rkey;
      w.add = wr->wr.atomic.compare_add;
    } else {
      w.remoteAddr = wr->wr.rdma.remote_addr;
      w.rkey = wr->wr.rdma.rkey;
      w.imm = wr->imm_data;
    }
    if (qp->state == IBV_QPS_ERR) {
      qp->sendCq->push(qp->completion(w, IBV_WC_WR_FLUSH_ERR));
    } else {
      qp->queued.push_back(w);
    }
  }
  qp->cv.notify_all();
  return 0;
}

int postRecv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  SubQp* qp = subQp(ibqp);
  std::lock_guard<std::mutex> lock(qp->mutex);
  if (qp->state == IBV_QPS_RESET) {
    *bad = wr;
    return EINVAL;
  }
  for (; wr != nullptr; wr = wr->next) {
    if (qp->recvs.size() >= qp->maxRecvWr) {
      *bad = wr;
      return ENOMEM;
    }
    if (qp->state == IBV_QPS_ERR) {
      ibv_wc wc{};
      wc.wr_id = wr->wr_id;
      wc.status = IBV_WC_WR_FLUSH_ERR;
      wc.opcode = IBV_WC_RECV;
      wc.qp_num = ibqp->qp_num;
      qp->recvCq->push(wc);
    } else {
      qp->recvs.push_back(wr->wr_id);
    }
  }
  qp->cv.notify_all();
  return 0;
}

const char* wcStatusStr(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return "success";
    case IBV_WC_LOC_PROT_ERR:
      return "local protection error";
    case IBV_WC_WR_FLUSH_ERR:
      return "Work Request Flushed Error";
    case IBV_WC_REM_ACCESS_ERR:
      return "remote access error";
    case IBV_WC_REM_OP_ERR:
      return "remote operation error";
    case IBV_WC_REM_INV_REQ_ERR:
      return "remote invalid request error";
    case IBV_WC_RETRY_EXC_ERR:
      return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "RNR retry counter exceeded";
    default:
      return "unknown";
  }
}

const mscclpp::IbvTable kTable = {
    getDeviceList, freeDeviceList, getDeviceName, openDevice,  closeDevice, queryDevice, queryPort, queryGid,
    allocPd,       deallocPd,      regMr,         regDmabufMr, deregMr,     createCq,    destroyCq, createQp,
    modifyQp,      destroyQp,      postSend,      postRecv,    pollCq,      wcStatusStr,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const mscclpp::IbvTable* mscclppIbvProvider(uint32_t version) {
  return version == mscclpp::kIbvTableVersion ? &kTable : nullptr;
}

extern "C" __attribute__((visibility("default"))) int mscclppIbvSubstituteInject(const char* fault) {
  Fabric& f = fabric();
  if (std::strcmp(fault, "qp-error") == 0) {
    std::lock_guard<std::mutex> lock(f.qpMutex);
    for (auto& [qpn, qp] : f.qps) {
      std::lock_guard<std::mutex> qpLock(qp->mutex);
      qp->enterErrorLocked();
      qp->qp.state = qp->state;
    }
    return 0;
  }
  if (std::strcmp(fault, "fail-next-completion") == 0) {
    f.failNextCompletion = true;
    return 0;
  }
  return EINVAL;
}

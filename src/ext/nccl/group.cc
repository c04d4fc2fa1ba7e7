// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/nccl/group.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <mscclpp/gpu_utils.hpp>
#include <thread>
#include <vector>

#include "common/checks.hpp"
#include "common/logger.hpp"
#include "ext/nccl/status.hpp"
#include "gpu/cuda_event.hpp"

namespace mscclpp::nccl {

namespace {

struct GroupState {
  int depth = 0;
  std::vector<Task> tasks;
  std::vector<std::function<void()>> inits;
};

thread_local GroupState group;

bool isP2p(const Task& task) { return task.call == Call::Send || task.call == Call::Recv; }

collectives::DataType typeOf(ncclDataType_t type) { return static_cast<collectives::DataType>(type); }

collectives::ReduceOp opOf(const Task& task) {
  if (task.op < ncclNumOps) return collectives::ReduceOp(static_cast<collectives::ReduceOp::Kind>(task.op));
  std::lock_guard<std::mutex> lock(task.comm->mutex);
  return task.comm->preMulSumOps.at(task.op).op;
}

ncclRedOp_t realOpOf(const Task& task) {
  if (task.op < ncclNumOps) return task.op;
  std::lock_guard<std::mutex> lock(task.comm->mutex);
  return task.comm->preMulSumOps.at(task.op).realOp;
}

void runCollectiveOnOurs(const Task& t) {
  collectives::Collectives& c = *t.comm->collectives;
  switch (t.call) {
    case Call::AllReduce:
      c.allReduce(t.send, t.recv, t.count, typeOf(t.type), opOf(t), t.stream);
      return;
    case Call::AllGather:
      c.allGather(t.send, t.recv, t.count, typeOf(t.type), t.stream);
      return;
    case Call::ReduceScatter:
      c.reduceScatter(t.send, t.recv, t.count, typeOf(t.type), opOf(t), t.stream);
      return;
    case Call::Broadcast:
      c.broadcast(t.send, t.recv, t.count, typeOf(t.type), t.root, t.stream);
      return;
    case Call::Reduce:
      c.reduce(t.send, t.recv, t.count, typeOf(t.type), opOf(t), t.root, t.stream);
      return;
    case Call::AllToAll:
      c.allToAll(t.send, t.recv, t.count, typeOf(t.type), t.stream);
      return;
    case Call::Gather:
      c.gather(t.send, t.recv, t.count, typeOf(t.type), t.root, t.stream);
      return;
    case Call::Scatter:
      c.scatter(t.send, t.recv, t.count, typeOf(t.type), t.root, t.stream);
      return;
    case Call::Send:
      c.send(t.send, t.count, typeOf(t.type), t.root, t.stream);
      return;
    case Call::Recv:
      c.recv(t.recv, t.count, typeOf(t.type), t.root, t.stream);
      return;
  }
}

ncclResult_t runOnReal(const Task& t) {
  ncclComm* c = t.comm;
  ncclComm_t r = c->real;
  const char* call = callInfo(t.call).name;
  switch (t.call) {
    case Call::AllReduce:
      return callReal(c, call, &RealNccl::AllReduce, t.send, t.recv, t.count, t.type, realOpOf(t), r, t.stream);
    case Call::AllGather:
      return callReal(c, call, &RealNccl::AllGather, t.send, t.recv, t.count, t.type, r, t.stream);
    case Call::ReduceScatter:
      return callReal(c, call, &RealNccl::ReduceScatter, t.send, t.recv, t.count, t.type, realOpOf(t), r, t.stream);
    case Call::Broadcast:
      return callReal(c, call, &RealNccl::Broadcast, t.send, t.recv, t.count, t.type, t.root, r, t.stream);
    case Call::Reduce:
      return callReal(c, call, &RealNccl::Reduce, t.send, t.recv, t.count, t.type, realOpOf(t), t.root, r, t.stream);
    case Call::AllToAll:
      return callReal(c, call, &RealNccl::AlltoAll, t.send, t.recv, t.count, t.type, r, t.stream);
    case Call::Gather:
      return callReal(c, call, &RealNccl::Gather, t.send, t.recv, t.count, t.type, t.root, r, t.stream);
    case Call::Scatter:
      return callReal(c, call, &RealNccl::Scatter, t.send, t.recv, t.count, t.type, t.root, r, t.stream);
    case Call::Send:
      return callReal(c, call, &RealNccl::Send, t.send, t.count, t.type, t.root, r, t.stream);
    case Call::Recv:
      return callReal(c, call, &RealNccl::Recv, t.recv, t.count, t.type, t.root, r, t.stream);
  }
  MSCCLPP_ASSERT(false, "unknown call ", static_cast<int>(t.call));
}

/// A send to this rank itself needs a receive from itself of the same size in the same batch; without
/// one the batch would wait forever.
void checkSelfPairs(ncclComm* comm, const std::vector<Task>& p2p) {
  std::vector<size_t> sends, recvs;
  for (const Task& t : p2p) {
    if (t.root != comm->rank) continue;
    (t.call == Call::Send ? sends : recvs).push_back(t.count * collectives::dataTypeSize(typeOf(t.type)));
  }
  MSCCLPP_CHECK_USAGE(sends == recvs, "rank ", comm->rank, ": ", sends.size(), " ncclSend and ", recvs.size(),
                      " ncclRecv to and from the rank itself in one group do not pair up (same count and",
                      " type, in order); the group would never complete");
}

/// Runs the p2p batch of one communicator on our collectives, on the stream of its first operation;
/// operations on other streams are ordered around it with events.
void runP2pOnOurs(ncclComm* comm, const std::vector<Task>& p2p) {
  checkSelfPairs(comm, p2p);
  collectives::Collectives& c = *comm->collectives;
  if (p2p.size() == 1) return runCollectiveOnOurs(p2p.front());
  cudaStream_t main = p2p.front().stream;
  std::vector<cudaStream_t> others;
  for (const Task& t : p2p) {
    if (t.stream != main && std::find(others.begin(), others.end(), t.stream) == others.end())
      others.push_back(t.stream);
  }
  // The events may go at the end of this scope while work that records or waits on them is pending.
  std::vector<CudaEvent> events;
  events.reserve(others.size() + 1);
  for (cudaStream_t s : others) {
    const CudaEvent& event = events.emplace_back(cudaEventDisableTiming);
    MSCCLPP_CUDATHROW(cudaEventRecord(event, s));
    MSCCLPP_CUDATHROW(cudaStreamWaitEvent(main, event, 0));
  }
  c.groupStart();
  for (Task t : p2p) {
    t.stream = main;
    runCollectiveOnOurs(t);
  }
  c.groupEnd();
  if (!others.empty()) {
    const CudaEvent& done = events.emplace_back(cudaEventDisableTiming);
    MSCCLPP_CUDATHROW(cudaEventRecord(done, main));
    for (cudaStream_t s : others) MSCCLPP_CUDATHROW(cudaStreamWaitEvent(s, done, 0));
  }
}

ncclResult_t runTasks(const std::vector<Task>& tasks) {
  std::vector<ncclComm*> order;
  std::map<ncclComm*, std::vector<Task>> ours, oursP2p;
  std::vector<Task> real;
  for (const Task& t : tasks) {
    MSCCLPP_CHECK_USAGE(!t.comm->aborted, "the communicator was aborted");
    if (!runsOnOurs(t.comm, callInfo(t.call).collective)) {
      real.push_back(t);
      continue;
    }
    if (ours.count(t.comm) == 0 && oursP2p.count(t.comm) == 0) order.push_back(t.comm);
    (isP2p(t) ? oursP2p : ours)[t.comm].push_back(t);
  }
  for (ncclComm* comm : order) {
    CudaDeviceGuard deviceGuard(comm->cudaDev);
    for (const Task& t : ours[comm]) runCollectiveOnOurs(t);
    if (!oursP2p[comm].empty()) runP2pOnOurs(comm, oursP2p[comm]);
  }
  if (real.empty()) return ncclSuccess;
  if (real.size() == 1) return runOnReal(real.front());
  ncclComm* first = real.front().comm;
  if (ncclResult_t res = callReal(first, "ncclGroupEnd", &RealNccl::GroupStart); res != ncclSuccess) return res;
  ncclResult_t result = ncclSuccess;
  for (const Task& t : real) {
    const ncclResult_t res = runOnReal(t);
    if (result == ncclSuccess) result = res;
  }
  // The real group is closed even after a failure, or NCCL's thread stays inside it.
  const ncclResult_t end = callReal(first, "ncclGroupEnd", &RealNccl::GroupEnd);
  return result != ncclSuccess ? result : end;
}

void runInits(std::vector<std::function<void()>>& inits) {
  if (inits.size() == 1) return inits.front()();
  std::vector<std::exception_ptr> errors(inits.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < inits.size(); ++i) {
    threads.emplace_back([&, i]() {
      try {
        inits[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace

ncclResult_t submit(const Task& task) {
  if (group.depth > 0) {
    group.tasks.push_back(task);
    return ncclSuccess;
  }
  return runTasks({task});
}

void submitInit(std::function<void()> init) {
  if (group.depth > 0) {
    group.inits.push_back(std::move(init));
    return;
  }
  init();
}

bool inGroup() { return group.depth > 0; }

void groupStart() { ++group.depth; }

ncclResult_t groupEnd() {
  if (group.depth == 0) {
    return fail(nullptr, "ncclGroupEnd", ncclInvalidUsage, "ncclGroupEnd without a matching ncclGroupStart");
  }
  if (--group.depth > 0) return ncclSuccess;
  std::vector<std::function<void()>> inits = std::move(group.inits);
  std::vector<Task> tasks = std::move(group.tasks);
  group.inits.clear();
  group.tasks.clear();
  runInits(inits);
  return runTasks(tasks);
}

ncclResult_t groupSimulateEnd() {
  if (group.depth == 0) {
    return fail(nullptr, "ncclGroupSimulateEnd", ncclInvalidUsage,
                "ncclGroupSimulateEnd without a matching ncclGroupStart");
  }
  if (--group.depth > 0) return ncclSuccess;
  // Nothing is launched, but the communicators the group initializes are real handles the caller
  // owns: those inits still run.
  std::vector<std::function<void()>> inits = std::move(group.inits);
  group.inits.clear();
  group.tasks.clear();
  runInits(inits);
  return ncclSuccess;
}

}  // namespace mscclpp::nccl

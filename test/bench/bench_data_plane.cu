// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The data plane between ranks 0 and 1 (other ranks idle): semaphore and packet latency, the proxy
// FIFO, port-channel round trips and channel bandwidth. Every figure is printed next to a reference
// measured in the same run on the same processes: a raw flag ping-pong over the same kind of mapped
// memory, a raw GPU-host round trip, raw TCP, or cudaMemcpyAsync.
//
// Device-side times come from the GPU's global timer (cuda::std::chrono::system_clock) read by the
// timing thread. Its resolution can be coarse, so latencies are timed over batches of iterations and
// the median of the batches is divided by the batch size.

#include <atomic>
#include <cuda/std/chrono>
#include <mscclpp/arch/st_release_sm90.hpp>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/memory_channel.hpp>
#include <mscclpp/port_channel.hpp>
#include <mscclpp/proxy.hpp>
#include <mscclpp/semaphore.hpp>
#include <thread>
#include <vector>

#include "bench/bench.hpp"
#include "bootstrap/socket.hpp"
#include "gpu/cuda_event.hpp"
#include "gpu/driver_api.hpp"

namespace mscclpp::bench {
namespace {

// ---- shared pieces ----

/// Device waits in the benchmarks give up (trap) after this many polls: a minute or so, not a hang
/// when the other rank failed before launching its side.
constexpr int64_t kBenchSpin = 100000000;

__device__ uint64_t nowNs() {
  return cuda::std::chrono::duration_cast<cuda::std::chrono::nanoseconds>(
             cuda::std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string gpuSkipReason(BenchContext& ctx) {
  const auto& caps = gpuCapabilities();
  if (!caps.gpuAvailable()) return caps.unavailableReason;
  if (ctx.nRanks < 2) return "needs at least 2 ranks";
  return "";
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw Error(std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")",
                ErrorCode::InternalError);
  }
}

/// Device memory for a benchmark, zeroed.
struct Buffer {
  explicit Buffer(size_t bytes) : bytes(bytes) {
    check(cudaMalloc(&ptr, bytes), "cudaMalloc");
    check(cudaMemset(ptr, 0, bytes), "cudaMemset");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  ~Buffer() { (void)cudaFree(ptr); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* get() const { return static_cast<char*>(ptr); }
  void* ptr = nullptr;
  size_t bytes;
};

/// Batch durations in ns that a kernel leaves behind, read after it finished.
struct Samples {
  explicit Samples(int count) : count(count), device(count * sizeof(uint64_t)) {}
  /// Median of the batches divided by the batch size, in microseconds.
  double medianUs(cudaStream_t stream, int perBatch) {
    std::vector<uint64_t> ns(count);
    check(cudaMemcpyAsync(ns.data(), device.get(), count * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::vector<double> us(ns.begin(), ns.end());
    return median(us) / 1e3 / perBatch;
  }
  uint64_t* out() const { return reinterpret_cast<uint64_t*>(device.get()); }
  int count;
  Buffer device;
};

/// Ranks 0 and 1 in one place: the bootstrap, a communicator, this rank's GPU and a stream.
class Pair {
 public:
  explicit Pair(BenchContext& ctx)
      : rank_(ctx.rank), bootstrap_(ctx.bootstrap()), device_(ctx.rank % gpuCapabilities().deviceCount) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    comm_ = std::make_unique<Communicator>(bootstrap_);
  }
  ~Pair() {
    comm_.reset();
    buffers_.clear();
    (void)cudaStreamDestroy(stream_);
  }

  /// Device memory that lives as long as the pair: onPair frees it only after both ranks have dropped
  /// their mappings of each other's buffers (freeing memory a peer still has open is undefined).
  Buffer& allocate(size_t bytes) {
    buffers_.push_back(std::make_unique<Buffer>(bytes));
    return *buffers_.back();
  }
  int peer() const { return 1 - rank_; }
  bool initiator() const { return rank_ == 0; }
  Communicator& comm() { return *comm_; }
  cudaStream_t stream() const { return stream_; }
  void sync() { bootstrap_->groupBarrier({0, 1}); }
  void finish() { check(cudaStreamSynchronize(stream_), "kernel"); }

  /// Registers `buffer` for `transport`, swaps it with the peer and returns the peer's.
  RegisteredMemory exchange(const Buffer& buffer, TransportFlags transport, RegisteredMemory& local, int tag = 0) {
    local = comm_->registerMemory(buffer.ptr, buffer.bytes, transport);
    comm_->sendMemory(local, peer(), tag);
    return comm_->recvMemory(peer(), tag).get();
  }

 private:
  int rank_;
  std::shared_ptr<TcpBootstrap> bootstrap_;
  int device_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<Communicator> comm_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

/// Runs `body` on ranks 0 and 1; the others wait at the closing barrier with them.
std::vector<Table> onPair(BenchContext& ctx, const std::function<std::vector<Table>(Pair&)>& body) {
  auto bootstrap = ctx.bootstrap();
  std::vector<Table> tables;
  if (ctx.rank <= 1) {
    Pair pair(ctx);
    tables = body(pair);
    pair.sync();
  }
  bootstrap->barrier();
  return tables;
}

/// Raw reference: a counter stored into the peer's mapped memory and polled in this rank's, with
/// plain volatile stores and loads; `batches` batches of `perBatch` round trips, timed by the
/// initiator. Values continue from `base` so that runs can follow each other without a reset.
__global__ void rawFlagPingPongKernel(volatile uint64_t* mine, volatile uint64_t* peers, uint64_t base, int batches,
                                      int perBatch, bool initiator, bool release, uint64_t* samples, int* failed) {
  uint64_t value = base;
  // The store of the counter: plain, or (`release`) a system-scope store-release, the least any
  // signal that publishes earlier writes must do.
  auto store = [&] {
    if (release)
      atomicStore<uint64_t, scopeSystem>(const_cast<uint64_t*>(peers), value, memoryOrderRelease);
    else
      *peers = value;
  };
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = nowNs();
    for (int i = 0; i < perBatch; ++i) {
      ++value;
      int64_t spins = 0;
      if (initiator) {
        store();
        while (*mine < value) {
          if (++spins > kBenchSpin) {
            *failed = 1;
            return;
          }
        }
      } else {
        while (*mine < value) {
          if (++spins > kBenchSpin) {
            *failed = 1;
            return;
          }
        }
        store();
      }
    }
    if (initiator) samples[b] = nowNs() - t0;
  }
}

/// The raw reference between the pair: one hop in microseconds (half the median round trip).
class RawFlagReference {
 public:
  explicit RawFlagReference(Pair& pair) : pair_(pair), flags_(pair.allocate(64)), failed_(pair.allocate(sizeof(int))) {
    remote_ = pair.exchange(flags_, Transport::CudaIpc, local_, 7);
  }
  /// `release`: the stores are system-scope store-releases instead of plain ones.
  double hopUs(int batches, int perBatch, bool release = false) {
    Samples samples(batches);
    pair_.sync();
    rawFlagPingPongKernel<<<1, 1, 0, pair_.stream()>>>(
        reinterpret_cast<volatile uint64_t*>(flags_.ptr), static_cast<volatile uint64_t*>(remote_.data()), base_,
        batches, perBatch, pair_.initiator(), release, samples.out(), reinterpret_cast<int*>(failed_.ptr));
    check(cudaGetLastError(), "rawFlagPingPongKernel");
    pair_.finish();
    base_ += uint64_t(batches) * perBatch;
    int failed = 0;
    check(cudaMemcpy(&failed, failed_.ptr, sizeof(failed), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (failed) throw Error("the raw flag ping-pong gave up waiting", ErrorCode::Timeout);
    return samples.medianUs(pair_.stream(), perBatch) / 2;
  }

 private:
  Pair& pair_;
  Buffer& flags_;
  Buffer& failed_;
  RegisteredMemory local_;
  RegisteredMemory remote_;
  uint64_t base_ = 0;
};

// ---- signal-latency ----
//
// Timed: on rank 0, the global timer around batches of round trips of a single thread per rank:
// rank 0 signal() then wait(); rank 1 wait() then signal(), through a MemoryDevice2DeviceSemaphore
// over CudaIpc; then the same with relaxedSignal()/relaxedWait(). One hop = half a round trip.
// Reference: the same ping-pong with plain volatile stores of a counter into the peer's mapped memory
// and volatile loads of this rank's; and that ping-pong with system-scope store-releases, the floor of
// any signal that orders the writes before it.

template <bool Relaxed>
__global__ void semaphorePingPongKernel(MemoryDevice2DeviceSemaphoreDeviceHandle semaphore, int batches, int perBatch,
                                        bool initiator, uint64_t* samples) {
  auto signal = [&] { Relaxed ? semaphore.relaxedSignal() : semaphore.signal(); };
  auto wait = [&] { Relaxed ? semaphore.relaxedWait(kBenchSpin) : semaphore.wait(kBenchSpin); };
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = nowNs();
    for (int i = 0; i < perBatch; ++i) {
      if (initiator) {
        signal();
        wait();
      } else {
        wait();
        signal();
      }
    }
    if (initiator) samples[b] = nowNs() - t0;
  }
}

std::vector<Table> signalLatency(BenchContext& ctx) {
  return onPair(ctx, [&](Pair& pair) {
    const int batches = ctx.quick ? 20 : 200, perBatch = ctx.quick ? 100 : 500;
    Connection conn = pair.comm().connect(Transport::CudaIpc, pair.peer()).get();
    MemoryDevice2DeviceSemaphore semaphore(pair.comm(), conn);
    RawFlagReference raw(pair);
    const double rawUs = raw.hopUs(batches, perBatch);
    const double rawReleaseUs = raw.hopUs(batches, perBatch, true);
    auto measure = [&](auto kernel, const char* name) {
      Samples samples(batches);
      pair.sync();
      kernel<<<1, 1, 0, pair.stream()>>>(semaphore.deviceHandle(), batches, perBatch, pair.initiator(), samples.out());
      check(cudaGetLastError(), name);
      pair.finish();
      return samples.medianUs(pair.stream(), perBatch) / 2;
    };
    const double semUs = measure(semaphorePingPongKernel<false>, "signal+wait");
    const double relaxedUs = measure(semaphorePingPongKernel<true>, "relaxedSignal+relaxedWait");
    Table table{"cross-process signal latency, ranks 0 and 1 (MemoryDevice2DeviceSemaphore over CudaIpc)",
                {"method", "us_per_hop", "raw_us_per_hop", "ratio"},
                {{"signal+wait", fmt(semUs, 3), fmt(rawUs, 3), fmt(semUs / rawUs)},
                 {"relaxedSignal+relaxedWait", fmt(relaxedUs, 3), fmt(rawUs, 3), fmt(relaxedUs / rawUs)},
                 {"raw with store-release (sys)", fmt(rawReleaseUs, 3), fmt(rawUs, 3), fmt(rawReleaseUs / rawUs)}},
                {"median of " + std::to_string(batches) + " batches of " + std::to_string(perBatch) +
                     " round trips; one hop = half a round trip",
                 "raw: volatile store of a counter into the peer's mapped memory, volatile load of our own",
                 "raw with store-release: the same with system-scope release stores, the floor of an ordered signal"}};
    return std::vector<Table>{table};
  });
}

// ---- packet-latency ----
//
// Timed: on rank 0, the global timer around batches of round trips of a single thread per rank: rank 0
// putPackets() one packet's payload (8 bytes LL16, 4 bytes LL8) into rank 1's packet buffer and
// unpackPackets() the answer from its own; rank 1 the other way round. The flag is the iteration
// number, on one never-cleared buffer. One hop = half a round trip. Reference: the raw flag hop.

constexpr uint64_t kPacketData = 0, kPacketRecv = 1024, kPacketBuffer = 4096;

template <typename Packet>
__global__ void packetPingPongKernel(MemoryChannelDeviceHandle channel, uint32_t firstFlag, int batches, int perBatch,
                                     bool initiator, uint64_t* samples) {
  constexpr uint64_t payload = sizeof(typename Packet::Payload);
  uint32_t flag = firstFlag;
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = nowNs();
    for (int i = 0; i < perBatch; ++i, ++flag) {
      if (initiator) {
        channel.putPackets<Packet>(kPacketBuffer, kPacketData, payload, 0, 1, flag);
        channel.unpackPackets<Packet>(kPacketBuffer, kPacketRecv, payload, 0, 1, flag, kBenchSpin);
      } else {
        channel.unpackPackets<Packet>(kPacketBuffer, kPacketRecv, payload, 0, 1, flag, kBenchSpin);
        channel.putPackets<Packet>(kPacketBuffer, kPacketData, payload, 0, 1, flag);
      }
    }
    if (initiator) samples[b] = nowNs() - t0;
  }
}

std::vector<Table> packetLatency(BenchContext& ctx) {
  return onPair(ctx, [&](Pair& pair) {
    const int batches = ctx.quick ? 20 : 200, perBatch = ctx.quick ? 100 : 500;
    Connection conn = pair.comm().connect(Transport::CudaIpc, pair.peer()).get();
    auto semaphore = std::make_shared<MemoryDevice2DeviceSemaphore>(pair.comm(), conn);
    Buffer& buffer = pair.allocate(8192);
    RegisteredMemory local;
    RegisteredMemory remote = pair.exchange(buffer, Transport::CudaIpc, local);
    MemoryChannel channel(semaphore, remote, local, buffer.ptr);
    RawFlagReference raw(pair);
    const double rawUs = raw.hopUs(batches, perBatch);
    Table table{"cross-process LL packet latency, ranks 0 and 1 (MemoryChannel putPackets/unpackPackets)",
                {"packet", "payload_B", "us_per_hop", "raw_us_per_hop", "ratio"},
                {},
                {"median of " + std::to_string(batches) + " batches of " + std::to_string(perBatch) +
                     " round trips of one packet; one hop = half a round trip",
                 "raw: volatile store of a counter into the peer's mapped memory, volatile load of our own"}};
    uint32_t flag = 1;
    auto measure = [&](auto kernel, const char* name, int payload) {
      Samples samples(batches);
      pair.sync();
      kernel<<<1, 1, 0, pair.stream()>>>(channel.deviceHandle(), flag, batches, perBatch, pair.initiator(),
                                         samples.out());
      check(cudaGetLastError(), name);
      pair.finish();
      flag += batches * perBatch;
      const double us = samples.medianUs(pair.stream(), perBatch) / 2;
      table.rows.push_back({name, std::to_string(payload), fmt(us, 3), fmt(rawUs, 3), fmt(us / rawUs)});
    };
    measure(packetPingPongKernel<LL16Packet>, "LL16", 8);
    // LL8 reuses the buffer LL16 wrote: its flags continue above every flag LL16 left there.
    measure(packetPingPongKernel<LL8Packet>, "LL8", 4);
    return std::vector<Table>{table};
  });
}

// ---- fifo ----
//
// Timed, on rank 0 only (rank 1 idles so that it does not share the GPU and CPU with the measurement):
// - throughput: the global timer around one GPU thread pushing 10,000 triggers into a 512-entry FIFO
//   and then waiting until the proxy thread (whose handler does nothing) has popped the last; divided
//   by 10,000. References: the same thread writing 10,000 16-byte records into a 512-slot ring in
//   mapped pinned host memory that nobody reads, (a) with relaxed stores, the cost of the writes alone,
//   and (b) with what the contract prescribes for each push: a relaxed fetch_add of a device counter
//   for the slot and one 16-byte system-scope store-release.
// - round trip: batches of push() + sync() of one trigger; reference: a raw GPU -> host -> GPU flag
//   round trip through mapped pinned memory with a host thread echoing the counter.

constexpr int kFifoTriggers = 10000;

__global__ void fifoPushKernel(FifoDeviceHandle fifo, int reps, int triggers, uint64_t* samples) {
  for (int r = 0; r < reps; ++r) {
    const uint64_t t0 = nowNs();
    uint64_t last = 0;
    for (int i = 0; i < triggers; ++i) last = fifo.push(ProxyTrigger(TriggerData, 0, 0, 0, i, 1, 0), kBenchSpin);
    fifo.sync(last, kBenchSpin);
    samples[r] = nowNs() - t0;
  }
}

template <bool Contract>
__global__ void rawRingStoreKernel(uint64_t* ring, uint64_t* counter, int reps, int records, uint64_t* samples) {
  for (int r = 0; r < reps; ++r) {
    const uint64_t t0 = nowNs();
    for (int i = 0; i < records; ++i) {
      if (Contract) {
        const uint64_t index = atomicFetchAdd<uint64_t, scopeDevice>(counter, 1, memoryOrderRelaxed);
        arch::StReleaseSysGlobalV2U64::store(ring + 2 * (index % 512), index + 1, index + 1);
      } else {
        uint64_t* slot = ring + 2 * (i % 512);
        atomicStore<uint64_t, scopeSystem>(slot + 1, uint64_t(i) + 1, memoryOrderRelaxed);
        atomicStore<uint64_t, scopeSystem>(slot, uint64_t(i) + 1, memoryOrderRelaxed);
      }
    }
    samples[r] = nowNs() - t0;
  }
}

__global__ void fifoRoundTripKernel(FifoDeviceHandle fifo, int batches, int perBatch, uint64_t* samples) {
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = nowNs();
    for (int i = 0; i < perBatch; ++i)
      fifo.sync(fifo.push(ProxyTrigger(TriggerFlag, 0, 0, 0, 0, 1, 0), kBenchSpin), kBenchSpin);
    samples[b] = nowNs() - t0;
  }
}

__global__ void rawHostRoundTripKernel(uint64_t* toHost, const uint64_t* fromHost, int batches, int perBatch,
                                       uint64_t* samples) {
  uint64_t value = 0;
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = nowNs();
    for (int i = 0; i < perBatch; ++i) {
      ++value;
      atomicStore<uint64_t, scopeSystem>(toHost, value, memoryOrderRelease);
      int64_t spins = 0;
      while (atomicLoad<uint64_t, scopeSystem>(fromHost, memoryOrderAcquire) < value && ++spins < kBenchSpin) {
      }
    }
    samples[b] = nowNs() - t0;
  }
}

std::vector<Table> fifoBench(BenchContext& ctx) {
  return onPair(ctx, [&](Pair& pair) {
    if (!pair.initiator()) return std::vector<Table>{};
    const int reps = ctx.quick ? 5 : 30;
    const int batches = ctx.quick ? 20 : 200, perBatch = ctx.quick ? 50 : 200;
    Proxy proxy([](ProxyTrigger) { return ProxyHandlerResult::Continue; }, DEFAULT_FIFO_SIZE);
    proxy.start(true);
    const FifoDeviceHandle fifo = proxy.fifo()->deviceHandle();

    Samples pushes(reps);
    fifoPushKernel<<<1, 1, 0, pair.stream()>>>(fifo, reps, kFifoTriggers, pushes.out());
    check(cudaGetLastError(), "fifoPushKernel");
    pair.finish();
    const double pushUs = pushes.medianUs(pair.stream(), kFifoTriggers);

    auto ring = detail::gpuCallocHostUnique<uint64_t>(2 * 512, cudaHostAllocMapped);
    uint64_t* ringOnDevice = nullptr;
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&ringOnDevice), ring.get(), 0), "cudaHostGetDevicePointer");
    Buffer counter(sizeof(uint64_t));
    auto ringUs = [&](auto kernel) {
      Samples stores(reps);
      kernel<<<1, 1, 0, pair.stream()>>>(ringOnDevice, reinterpret_cast<uint64_t*>(counter.ptr), reps, kFifoTriggers,
                                         stores.out());
      check(cudaGetLastError(), "rawRingStoreKernel");
      pair.finish();
      return stores.medianUs(pair.stream(), kFifoTriggers);
    };
    const double storeUs = ringUs(rawRingStoreKernel<false>);
    const double contractUs = ringUs(rawRingStoreKernel<true>);

    Samples trips(batches);
    fifoRoundTripKernel<<<1, 1, 0, pair.stream()>>>(fifo, batches, perBatch, trips.out());
    check(cudaGetLastError(), "fifoRoundTripKernel");
    pair.finish();
    const double tripUs = trips.medianUs(pair.stream(), perBatch);
    proxy.stop();

    // The raw round trip: a host thread echoes the counter the kernel writes.
    auto words = detail::gpuCallocHostUnique<uint64_t>(2, cudaHostAllocMapped);
    uint64_t* wordsOnDevice = nullptr;
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&wordsOnDevice), words.get(), 0),
          "cudaHostGetDevicePointer");
    const uint64_t total = uint64_t(batches) * perBatch;
    std::atomic<bool> stop{false};
    std::thread echo([&] {
      uint64_t seen = 0;
      while (seen < total && !stop.load(std::memory_order_relaxed)) {
        uint64_t v = atomicLoad(&words.get()[0], memoryOrderAcquire);
        if (v != seen) {
          seen = v;
          atomicStore(&words.get()[1], v, memoryOrderRelease);
        }
      }
    });
    Samples rawTrips(batches);
    rawHostRoundTripKernel<<<1, 1, 0, pair.stream()>>>(wordsOnDevice, wordsOnDevice + 1, batches, perBatch,
                                                       rawTrips.out());
    cudaError_t launch = cudaGetLastError();
    cudaError_t done = launch == cudaSuccess ? cudaStreamSynchronize(pair.stream()) : launch;
    stop = true;
    echo.join();
    check(done, "rawHostRoundTripKernel");
    const double rawTripUs = rawTrips.medianUs(pair.stream(), perBatch);

    Table table{"proxy FIFO on rank 0 (512 entries, handler does nothing)",
                {"measure", "us", "reference", "ref_us", "ratio"},
                {{"push, per trigger", fmt(pushUs, 3), "raw 16B relaxed stores to mapped host", fmt(storeUs, 3),
                  fmt(pushUs / storeUs)},
                 {"push, per trigger", fmt(pushUs, 3), "fetch_add + 16B store-release (sys)", fmt(contractUs, 3),
                  fmt(pushUs / contractUs)},
                 {"push + sync round trip", fmt(tripUs, 3), "raw GPU-host-GPU flag", fmt(rawTripUs, 3),
                  fmt(tripUs / rawTripUs)}},
                {"push: " + std::to_string(kFifoTriggers) + " triggers from one thread until the last is popped, " +
                     "median of " + std::to_string(reps) + " runs",
                 "round trip: median of " + std::to_string(batches) + " batches of " + std::to_string(perBatch)}};
    return std::vector<Table>{table};
  });
}

// ---- port-channel-rtt ----
//
// Timed: on rank 0, the global timer around batches of round trips: rank 0 putWithSignal() of a small
// message, flush(), then wait(); rank 1 wait(), then putWithSignal() + flush() back; one PortChannel
// per rank through its own ProxyService. Over CudaIpc and over Ethernet between GPU buffers.
// References in the same run: the raw flag round trip over mapped memory and twice a host-issued
// copy + stream write seen by a GPU kernel, what one proxy hop cannot beat (CudaIpc); a raw TCP
// ping-pong of the same message between the same two processes, host memory to host memory (Ethernet).

constexpr uint64_t kRttBytes = 64;
constexpr uint64_t kRttDst = 2048;

__global__ void portRoundTripKernel(PortChannelDeviceHandle channel, int batches, int perBatch, bool initiator,
                                    uint64_t* samples) {
  for (int b = 0; b < batches; ++b) {
    const uint64_t t0 = nowNs();
    for (int i = 0; i < perBatch; ++i) {
      if (initiator) {
        channel.putWithSignal(kRttDst, 0, kRttBytes);
        channel.flush(kBenchSpin);
        channel.wait(kBenchSpin);
      } else {
        channel.wait(kBenchSpin);
        channel.putWithSignal(kRttDst, 0, kRttBytes);
        channel.flush(kBenchSpin);
      }
    }
    if (initiator) samples[b] = nowNs() - t0;
  }
}

double rawTcpRoundTripUs(Pair& pair, int iters) {
  TcpSocket socket;
  int peer = pair.peer();
  if (pair.initiator()) {
    SocketAddress address;
    MPI_Recv(&address, sizeof(address), MPI_BYTE, peer, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    socket = TcpSocket::connect(address, Deadline::after(std::chrono::seconds(30)), "raw TCP peer");
  } else {
    TcpListener listener = TcpListener::listen(localInterfaceAddress());
    SocketAddress address = listener.address();
    MPI_Send(&address, sizeof(address), MPI_BYTE, peer, 91, MPI_COMM_WORLD);
    socket = listener.accept(Deadline::after(std::chrono::seconds(30)));
  }
  socket.setNoDelay();
  std::vector<char> message(kRttBytes, 1);
  std::vector<double> samples;
  const Deadline deadline = Deadline::after(std::chrono::seconds(120));
  for (int i = 0; i < iters + 10; ++i) {
    const double t0 = nowSec();
    if (pair.initiator()) {
      socket.sendAll(message.data(), message.size(), deadline);
      socket.recvAll(message.data(), message.size(), deadline);
    } else {
      socket.recvAll(message.data(), message.size(), deadline);
      socket.sendAll(message.data(), message.size(), deadline);
    }
    if (i >= 10) samples.push_back(nowSec() - t0);
  }
  return median(samples) * 1e6;
}

/// Polls `token` for 1, 2, ... `count` and answers each value in `ack` (mapped pinned host memory).
__global__ void tokenEchoKernel(const uint64_t* token, uint64_t* ack, int count, int* failed) {
  for (uint64_t k = 1; k <= uint64_t(count); ++k) {
    int64_t spins = 0;
    while (atomicLoad<uint64_t, scopeSystem>(token, memoryOrderRelaxed) < k) {
      if (++spins > kBenchSpin) {
        *failed = 1;
        return;
      }
    }
    atomicStore<uint64_t, scopeSystem>(ack, k, memoryOrderRelaxed);
  }
}

/// One proxy hop over CudaIpc without the proxy: a host thread issues what the proxy issues for a
/// putWithSignal (cudaMemcpyAsync of the message on a stream, then a stream write of the token) and a
/// GPU kernel polling the token answers through mapped pinned memory, on which the host spins. The
/// answer's way back stands for the trigger's way to the proxy. Median over `iters`, in us.
double hostIssuedCopyHopUs(Pair& pair, int iters) {
  Buffer& data = pair.allocate(2 * kRttBytes);
  Buffer& token = pair.allocate(sizeof(uint64_t));
  Buffer& failed = pair.allocate(sizeof(int));
  auto ack = detail::gpuCallocHostUnique<uint64_t>(1, cudaHostAllocMapped);
  uint64_t* ackOnDevice = nullptr;
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&ackOnDevice), ack.get(), 0), "cudaHostGetDevicePointer");
  CudaStreamWithFlags copyStream(cudaStreamNonBlocking);
  tokenEchoKernel<<<1, 1, 0, pair.stream()>>>(reinterpret_cast<uint64_t*>(token.ptr), ackOnDevice, iters,
                                              reinterpret_cast<int*>(failed.ptr));
  check(cudaGetLastError(), "tokenEchoKernel");
  std::vector<double> samples;
  const double giveUp = nowSec() + 60;
  for (int k = 1; k <= iters; ++k) {
    const double t0 = nowSec();
    check(cudaMemcpyAsync(data.get() + kRttBytes, data.get(), kRttBytes, cudaMemcpyDeviceToDevice, copyStream),
          "cudaMemcpyAsync");
    CUresult written = cu::cuStreamWriteValue64(reinterpret_cast<CUstream>(cudaStream_t(copyStream)),
                                                reinterpret_cast<CUdeviceptr>(token.ptr), k, 0);
    if (written != CUDA_SUCCESS) throw Error("cuStreamWriteValue64 failed", ErrorCode::InternalError);
    while (atomicLoad(ack.get(), memoryOrderAcquire) < uint64_t(k)) {
      if (nowSec() > giveUp) throw Error("the token echo kernel stopped answering", ErrorCode::Timeout);
    }
    samples.push_back(nowSec() - t0);
  }
  pair.finish();
  check(cudaStreamSynchronize(copyStream), "cudaStreamSynchronize");
  return median(samples) * 1e6;
}

std::vector<Table> portChannelRtt(BenchContext& ctx) {
  return onPair(ctx, [&](Pair& pair) {
    const int batches = ctx.quick ? 10 : 50, perBatch = ctx.quick ? 20 : 100;
    Table table{"PortChannel round trip, ranks 0 and 1: putWithSignal(" + std::to_string(kRttBytes) +
                    " B) + flush, answered the same way",
                {"transport", "rtt_us", "reference", "ref_rtt_us", "ratio"},
                {},
                {"median of " + std::to_string(batches) + " batches of " + std::to_string(perBatch) + " round trips"}};
    RawFlagReference raw(pair);
    const double rawRtt = 2 * raw.hopUs(batches, perBatch);
    const double tcpRtt = rawTcpRoundTripUs(pair, batches * perBatch);
    const double copyRtt = pair.initiator() ? 2 * hostIssuedCopyHopUs(pair, batches * perBatch) : 0;
    struct Variant {
      const char* name;
      EndpointConfig config;
      std::vector<std::pair<const char*, double>> references;
    };
    const Variant variants[] = {
        {"CudaIpc",
         EndpointConfig{Transport::CudaIpc},
         {{"raw GPU flag ping-pong", rawRtt}, {"2x host-issued copy + stream write", copyRtt}}},
        {"Ethernet (GPU memory)",
         EndpointConfig{Transport::Ethernet, DeviceType::GPU},
         {{"raw TCP, host memory", tcpRtt}}},
    };
    int tag = 20;
    for (const Variant& v : variants) {
      Buffer& buffer = pair.allocate(4096);
      ProxyService proxy;
      Connection conn = pair.comm().connect(v.config, pair.peer(), tag).get();
      SemaphoreId semaphore = proxy.buildAndAddSemaphore(pair.comm(), conn);
      RegisteredMemory local;
      RegisteredMemory remote = pair.exchange(buffer, v.config.transport, local, tag);
      MemoryId dst = proxy.addMemory(remote);
      MemoryId src = proxy.addMemory(local);
      PortChannel channel = proxy.portChannel(semaphore, dst, src);
      proxy.startProxy(true);
      Samples samples(batches);
      pair.sync();
      portRoundTripKernel<<<1, 1, 0, pair.stream()>>>(channel.deviceHandle(), batches, perBatch, pair.initiator(),
                                                      samples.out());
      check(cudaGetLastError(), "portRoundTripKernel");
      pair.finish();
      pair.sync();
      proxy.stopProxy();
      const double us = samples.medianUs(pair.stream(), perBatch);
      for (const auto& [reference, refUs] : v.references)
        table.rows.push_back({v.name, fmt(us, 2), reference, fmt(refUs, 2), fmt(us / refUs)});
      ++tag;
    }
    return std::vector<Table>{table};
  });
}

// ---- bandwidth ----
//
// Timed: on rank 0 only (rank 1 idles, its buffers mapped), cudaEvents on rank 0's stream around one
// operation of each size, median of several; rank 0's kernels use every SM x 1024 threads:
// - MemoryChannel put: rank 0's buffer into rank 1's (one direction);
// - MemoryChannel get: rank 1's buffer into rank 0's;
// - PortChannel put: one thread pushes put() + flush(); the proxy's copy engine moves the bytes;
// - putPackets (LL16): rank 0's payload as LL16 packets into rank 1's packet buffer (twice the
//   payload in bytes moved); the receiver does not unpack;
// each against cudaMemcpyAsync device-to-device of the same size within rank 0, timed the same way.
// GB/s counts the payload once.

template <bool Get>
__global__ void channelCopyKernel(MemoryChannelDeviceHandle channel, uint64_t bytes) {
  const uint32_t threadId = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t numThreads = gridDim.x * blockDim.x;
  if (Get) {
    channel.get(0, bytes, threadId, numThreads);
  } else {
    channel.put(0, bytes, threadId, numThreads);
  }
}

__global__ void putPacketsKernel(MemoryChannelDeviceHandle channel, uint64_t bytes, uint32_t flag) {
  const uint32_t threadId = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t numThreads = gridDim.x * blockDim.x;
  channel.putPackets<LL16Packet>(0, 0, bytes, threadId, numThreads, flag);
}

__global__ void portPutKernel(PortChannelDeviceHandle channel, uint64_t bytes) {
  channel.put(0, bytes);
  channel.flush(kBenchSpin);
}

std::vector<Table> bandwidth(BenchContext& ctx) {
  return onPair(ctx, [&](Pair& pair) {
    std::vector<size_t> sizes;
    // Every power of two in the full run: the targets name 64 and 128 MiB.
    for (size_t s = 1 << 20; s <= (ctx.quick ? (256 << 20) : (size_t(1) << 30)); s *= (ctx.quick ? 16 : 2)) {
      sizes.push_back(s);
    }
    const size_t maxBytes = sizes.back();
    const int iters = ctx.quick ? 5 : 20;
    Buffer& data = pair.allocate(maxBytes);    // rank 0: source of put and port put; rank 1: source of get
    Buffer& target = pair.allocate(maxBytes);  // destination of put, get, port put and the reference copy
    Buffer& packets = pair.allocate(2 * maxBytes);
    RegisteredMemory localData, localTarget, localPackets;
    RegisteredMemory remoteData = pair.exchange(data, Transport::CudaIpc, localData, 30);
    RegisteredMemory remoteTarget = pair.exchange(target, Transport::CudaIpc, localTarget, 31);
    RegisteredMemory remotePackets = pair.exchange(packets, Transport::CudaIpc, localPackets, 32);
    Connection conn = pair.comm().connect(Transport::CudaIpc, pair.peer(), 33).get();
    auto semaphore = std::make_shared<MemoryDevice2DeviceSemaphore>(pair.comm(), conn);
    MemoryChannel putChannel(semaphore, remoteTarget, localData);
    MemoryChannel getChannel(semaphore, remoteData, localTarget);
    MemoryChannel packetChannel(semaphore, remotePackets, localData);
    ProxyService proxy;
    SemaphoreId portSemaphore = proxy.buildAndAddSemaphore(pair.comm(), conn);
    const MemoryId portDst = proxy.addMemory(remoteTarget);
    const MemoryId portSrc = proxy.addMemory(localData);
    PortChannel portChannel = proxy.portChannel(portSemaphore, portDst, portSrc);
    proxy.startProxy(true);
    pair.sync();  // every mapping is made on both sides

    std::vector<Table> tables;
    if (pair.initiator()) {
      int device = 0, smCount = 0;
      check(cudaGetDevice(&device), "cudaGetDevice");
      check(cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
      CudaEvent start, stop;
      auto timeUs = [&](const std::function<void()>& op) {
        op();  // warm-up
        check(cudaStreamSynchronize(pair.stream()), "warm-up");
        std::vector<double> us;
        for (int i = 0; i < iters; ++i) {
          check(cudaEventRecord(start, pair.stream()), "cudaEventRecord");
          op();
          check(cudaEventRecord(stop, pair.stream()), "cudaEventRecord");
          check(cudaEventSynchronize(stop), "operation");
          float ms = 0;
          check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
          us.push_back(ms * 1e3);
        }
        return median(us);
      };
      const char* names[] = {"MemoryChannel put", "MemoryChannel get", "PortChannel put (proxy DMA)",
                             "MemoryChannel putPackets (LL16)"};
      std::vector<Table> perMethod;
      for (const char* name : names) {
        perMethod.push_back(Table{std::string(name) + ", rank 0 -> rank 1 memory, against cudaMemcpyAsync D2D",
                                  {"size", "time_us", "GB/s", "memcpy_GB/s", "ratio"},
                                  {},
                                  {"median of " + std::to_string(iters) + " timed operations per size"}});
      }
      uint32_t flag = 1;
      for (size_t bytes : sizes) {
        const double copyUs = timeUs([&] {
          check(cudaMemcpyAsync(target.ptr, data.ptr, bytes, cudaMemcpyDeviceToDevice, pair.stream()),
                "cudaMemcpyAsync");
        });
        const double results[] = {
            timeUs([&] {
              channelCopyKernel<false><<<smCount, 1024, 0, pair.stream()>>>(putChannel.deviceHandle(), bytes);
            }),
            timeUs([&] {
              channelCopyKernel<true><<<smCount, 1024, 0, pair.stream()>>>(getChannel.deviceHandle(), bytes);
            }),
            timeUs([&] { portPutKernel<<<1, 1, 0, pair.stream()>>>(portChannel.deviceHandle(), bytes); }),
            timeUs([&] {
              putPacketsKernel<<<smCount, 1024, 0, pair.stream()>>>(packetChannel.deviceHandle(), bytes, flag++);
            }),
        };
        check(cudaGetLastError(), "bandwidth kernels");
        const double copyGbps = bytes / copyUs / 1e3;
        for (size_t m = 0; m < perMethod.size(); ++m) {
          const double gbps = bytes / results[m] / 1e3;
          perMethod[m].rows.push_back(
              {fmtSize(bytes), fmt(results[m], 1), fmt(gbps), fmt(copyGbps), fmt(gbps / copyGbps)});
        }
      }
      tables = perMethod;
    }
    pair.sync();
    proxy.stopProxy();
    return tables;
  });
}

}  // namespace

MSCCLPP_BENCH_SECTION(signalLatency,
                      Section{"signal-latency", "cross-process MemoryDevice2DeviceSemaphore hop vs a raw flag hop",
                              gpuSkipReason, signalLatency});
MSCCLPP_BENCH_SECTION(packetLatency, Section{"packet-latency", "LL8/LL16 packet ping-pong vs a raw flag hop",
                                             gpuSkipReason, packetLatency});
MSCCLPP_BENCH_SECTION(fifoBench, Section{"fifo", "proxy FIFO push throughput and round trip vs raw mapped memory",
                                         gpuSkipReason, fifoBench});
MSCCLPP_BENCH_SECTION(portChannelRtt,
                      Section{"port-channel-rtt", "PortChannel putWithSignal+flush round trip (CudaIpc, Ethernet)",
                              gpuSkipReason, portChannelRtt});
MSCCLPP_BENCH_SECTION(bandwidth,
                      Section{"bandwidth", "MemoryChannel put/get, PortChannel put, LL16 putPackets vs cudaMemcpyAsync",
                              gpuSkipReason, bandwidth});

}  // namespace mscclpp::bench

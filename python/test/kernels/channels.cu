// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Kernels of python/test/test_gpu.py, built at test time by mscclpp.utils.KernelBuilder. Arguments come
// packed without padding, so 8-byte arguments go first. Channel kernels run one block per peer.

#include <mscclpp/fifo_device.hpp>
#include <mscclpp/memory_channel_device.hpp>
#include <mscclpp/port_channel_device.hpp>
#include <mscclpp/semaphore_device.hpp>

// Waits for the host's signal on semaphore blockIdx.x; done[blockIdx.x] says it arrived.
extern "C" __global__ void h2d_wait(mscclpp::Host2DeviceSemaphoreDeviceHandle semaphore, int* done) {
  if (threadIdx.x == 0) {
    semaphore.wait();
    done[blockIdx.x] = 1;
  }
}

// nRounds of signal-then-wait with the peer of semaphores[blockIdx.x]; rounds[blockIdx.x] counts them.
extern "C" __global__ void d2d_ping_pong(mscclpp::MemoryDevice2DeviceSemaphoreDeviceHandle* semaphores, int* rounds,
                                         int nRounds) {
  if (threadIdx.x == 0) {
    mscclpp::MemoryDevice2DeviceSemaphoreDeviceHandle& semaphore = semaphores[blockIdx.x];
    for (int i = 0; i < nRounds; ++i) {
      semaphore.signal();
      semaphore.wait();
      rounds[blockIdx.x] = i + 1;
    }
  }
}

// Puts this rank's slot into every peer's buffer at the same offset, then signals; waits for every peer's.
extern "C" __global__ void memory_put(mscclpp::MemoryChannelDeviceHandle* channels, uint64_t slotBytes, int rank) {
  mscclpp::MemoryChannelDeviceHandle& channel = channels[blockIdx.x];
  uint64_t offset = static_cast<uint64_t>(rank) * slotBytes;
  channel.put(offset, offset, slotBytes, threadIdx.x, blockDim.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    channel.signal();
    channel.wait();
  }
}

// Reads every peer's slot from the peer's buffer, once the peer has signaled that it is ready.
extern "C" __global__ void memory_get(mscclpp::MemoryChannelDeviceHandle* channels, int* peers, uint64_t slotBytes) {
  mscclpp::MemoryChannelDeviceHandle& channel = channels[blockIdx.x];
  if (threadIdx.x == 0) {
    channel.signal();
    channel.wait();
  }
  __syncthreads();
  uint64_t offset = static_cast<uint64_t>(peers[blockIdx.x]) * slotBytes;
  channel.get(offset, offset, slotBytes, threadIdx.x, blockDim.x);
}

// Sends this rank's slot as LL16 packets into every peer's packet buffer (at this rank's packet slot) and
// unpacks each peer's packets into the peer's slot of the local buffer; packets need no signal.
extern "C" __global__ void memory_packets(mscclpp::MemoryChannelDeviceHandle* channels, int* peers, uint64_t slotBytes,
                                          int rank, int flag) {
  mscclpp::MemoryChannelDeviceHandle& channel = channels[blockIdx.x];
  uint64_t packetSlot = slotBytes * 2;  // an LL16 packet carries 8 bytes in 16
  channel.putPackets(static_cast<uint64_t>(rank) * packetSlot, static_cast<uint64_t>(rank) * slotBytes, slotBytes,
                     threadIdx.x, blockDim.x, flag);
  int peer = peers[blockIdx.x];
  channel.unpackPackets(static_cast<uint64_t>(peer) * packetSlot, static_cast<uint64_t>(peer) * slotBytes, slotBytes,
                        threadIdx.x, blockDim.x, flag);
}

// Puts this rank's slot into every peer through the proxy, with a signal and a flush; waits for every peer's.
extern "C" __global__ void port_put(mscclpp::PortChannelDeviceHandle* channels, uint64_t slotBytes, int rank) {
  if (threadIdx.x == 0) {
    mscclpp::PortChannelDeviceHandle& channel = channels[blockIdx.x];
    uint64_t offset = static_cast<uint64_t>(rank) * slotBytes;
    channel.putWithSignalAndFlush(offset, offset, slotBytes);
    channel.wait();
  }
}

// Pushes `count` data requests whose fields encode their index, for a proxy to check.
extern "C" __global__ void fifo_push(mscclpp::FifoDeviceHandle fifo, int count) {
  if (threadIdx.x == 0) {
    for (int i = 0; i < count; ++i) {
      fifo.push(mscclpp::ProxyTrigger(mscclpp::TriggerData, i % 512, 2 * i, (i + 1) % 512, 3 * i, i + 1, i % 1024));
    }
  }
}

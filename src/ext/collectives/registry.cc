// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/collectives/registry.hpp"

#include <iterator>
#include <mscclpp/gpu_utils.hpp>
#include <string>

#include "common/checks.hpp"
#include "gpu/driver_api.hpp"

namespace mscclpp {
namespace collectives {

BufferRegistry::Identity BufferRegistry::identityOf(const void* ptr) {
  Identity id;
  const CUdeviceptr address = reinterpret_cast<CUdeviceptr>(const_cast<void*>(ptr));
  CUdeviceptr base{};
  size_t size = 0;
  if (cu::cuMemGetAddressRange(&base, &size, address) == CUDA_SUCCESS) {
    id.base = deviceAddress(base);
    id.size = size;
  }
  // Not every kind of allocation has a buffer id; the range alone then identifies it.
  if (cu::cuPointerGetAttribute(&id.bufferId, CU_POINTER_ATTRIBUTE_BUFFER_ID, address) != CUDA_SUCCESS) {
    id.bufferId = 0;
  }
  return id;
}

std::string shareRefusal(const void* ptr, size_t bytes) {
  if (ptr == nullptr || bytes == 0) return "the buffer is null or empty";
  cudaPointerAttributes attrs{};
  if (cudaPointerGetAttributes(&attrs, ptr) != cudaSuccess || !isDeviceMemory(attrs)) {
    (void)cudaGetLastError();
    return "the buffer is not device memory";
  }
  int device = -1;
  MSCCLPP_CUDATHROW(cudaGetDevice(&device));
  if (attrs.device != device) return "the buffer is on another GPU than the current one";
  if (BufferRegistry::identityOf(ptr).size == 0) return "the driver does not know the buffer's allocation";
  return "";
}

std::vector<int64_t> gatherFromEveryRank(Bootstrap& bootstrap, int64_t mine) {
  std::vector<int64_t> all(bootstrap.getNranks());
  all[bootstrap.getRank()] = mine;
  bootstrap.allGather(all.data(), sizeof(int64_t));
  return all;
}

std::vector<std::vector<char>> swapWithPeers(Bootstrap& bootstrap, const std::vector<char>& mine, int tag) {
  const int rank = bootstrap.getRank(), nRanks = bootstrap.getNranks();
  for (int p = 0; p < nRanks; ++p) {
    if (p != rank) bootstrap.send(mine, p, tag);
  }
  std::vector<std::vector<char>> received(nRanks);
  for (int p = 0; p < nRanks; ++p) {
    if (p != rank) bootstrap.recv(received[p], p, tag);
  }
  return received;
}

RegisteredMemory mapPeerMemory(const std::vector<char>& serialized, int peer, std::string& firstFailure) {
  try {
    RegisteredMemory memory = RegisteredMemory::deserialize(serialized);
    if (memory.data() != nullptr) return memory;
    if (firstFailure.empty()) firstFailure = concat("rank ", peer, ": no mapping over CudaIpc");
  } catch (const BaseError& err) {
    if (firstFailure.empty()) firstFailure = concat("rank ", peer, ": ", err.what());
  }
  return RegisteredMemory();
}

BufferRegistry::BufferRegistry(std::shared_ptr<Communicator> comm, int tag)
    : comm_(std::move(comm)),
      tag_(tag),
      rank_(comm_->bootstrap()->getRank()),
      nRanks_(comm_->bootstrap()->getNranks()) {}

void BufferRegistry::add(void* ptr, size_t bytes) {
  std::string why = shareRefusal(ptr, bytes);
  const uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
  if (why.empty()) {
    auto next = entries_.lower_bound(start);
    const bool overlapsNext = next != entries_.end() && next->first < start + bytes;
    const bool overlapsPrevious =
        next != entries_.begin() && std::prev(next)->first + std::prev(next)->second.bytes > start;
    if (overlapsNext || overlapsPrevious) why = "the buffer overlaps a registered one";
  }
  Entry e;
  if (why.empty()) {
    try {
      e.local = comm_->registerMemory(ptr, bytes, Transport::CudaIpc);
    } catch (const Error& err) {
      why = std::string("it cannot be exported: ") + err.what();
    }
  }
  // Every rank's size, or -1 for a refusal: all ranks decide alike whether to go on.
  const std::vector<int64_t> sizes =
      gatherFromEveryRank(*comm_->bootstrap(), why.empty() ? static_cast<int64_t>(bytes) : -1);
  MSCCLPP_CHECK_USAGE(why.empty(), "registerBuffer(", ptr, ", ", bytes, " bytes): ", why);
  for (int q = 0; q < nRanks_; ++q) {
    MSCCLPP_CHECK_USAGE(sizes[q] >= 0, "registerBuffer: rank ", q, " refused its buffer; nothing was registered");
    MSCCLPP_CHECK_USAGE(sizes[q] == static_cast<int64_t>(bytes), "registerBuffer: rank ", q, " registers ", sizes[q],
                        " bytes, this rank ", bytes, "; every rank must register the same size");
  }

  e.bytes = bytes;
  e.serial = nextSerial_++;
  e.allocation = identityOf(ptr);
  // Each peer's mapping is owned by this entry alone and ends with it (swapWithPeers says why).
  const std::vector<std::vector<char>> received = swapWithPeers(*comm_->bootstrap(), e.local.serialize(), tag_);
  e.peers.resize(nRanks_);
  std::string unmapped;
  for (int p = 0; p < nRanks_; ++p) {
    if (p == rank_) {
      e.starts.ptr[p] = static_cast<char*>(ptr);
      continue;
    }
    e.peers[p] = mapPeerMemory(received[p], p, unmapped);
    e.starts.ptr[p] = static_cast<char*>(e.peers[p].data());
  }
  const std::vector<int64_t> mapped = gatherFromEveryRank(*comm_->bootstrap(), unmapped.empty() ? 1 : 0);
  MSCCLPP_CHECK_USAGE(unmapped.empty(), "registerBuffer: a peer's buffer cannot be mapped here (", unmapped,
                      "); nothing was registered");
  for (int q = 0; q < nRanks_; ++q) {
    MSCCLPP_CHECK_USAGE(mapped[q] == 1, "registerBuffer: rank ", q,
                        " cannot map a peer's buffer; nothing was registered");
  }
  entries_.emplace(start, std::move(e));
}

void BufferRegistry::remove(void* ptr) {
  auto it = entries_.find(reinterpret_cast<uintptr_t>(ptr));
  // Kernels of this rank that still use the buffer end first; the gather below then waits for every
  // rank to have done the same, so no rank releases a mapping a peer's kernel is using.
  MSCCLPP_CUDATHROW(cudaDeviceSynchronize());
  const std::vector<int64_t> serials =
      gatherFromEveryRank(*comm_->bootstrap(), it == entries_.end() ? -1 : static_cast<int64_t>(it->second.serial));
  MSCCLPP_CHECK_USAGE(it != entries_.end(), "deregisterBuffer: ", ptr,
                      " is not a registered pointer of this object (deregistered already, or never registered)");
  for (int q = 0; q < nRanks_; ++q) {
    MSCCLPP_CHECK_USAGE(serials[q] == serials[rank_], "deregisterBuffer: rank ", q,
                        serials[q] < 0 ? " named no registration" : " named another registration",
                        "; nothing was deregistered");
  }
  entries_.erase(it);
}

bool BufferRegistry::find(const void* ptr, size_t bytes, PeerBuffers& view) const {
  if (entries_.empty()) return false;
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = entries_.upper_bound(address);
  if (it == entries_.begin()) return false;
  --it;
  const Entry& e = it->second;
  const uintptr_t offset = address - it->first;
  if (offset > e.bytes || bytes > e.bytes - offset) return false;
  MSCCLPP_CHECK_USAGE(identityOf(ptr) == e.allocation, "buffer ", ptr, " lies in registration ", e.serial,
                      " but its allocation was freed since (deregister a buffer before freeing it)");
  for (int q = 0; q < nRanks_; ++q) view.ptr[q] = e.starts.ptr[q] + offset;
  return true;
}

}  // namespace collectives
}  // namespace mscclpp

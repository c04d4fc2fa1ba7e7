// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "ext/collectives/capture_registry.hpp"

#include <algorithm>
#include <mscclpp/gpu_utils.hpp>

#include "common/checks.hpp"
#include "common/logger.hpp"
#include "common/serialization.hpp"

namespace mscclpp {
namespace collectives {

namespace {

const char* refusalText(int32_t refusal) {
  switch (static_cast<CaptureRefusal>(refusal)) {
    case CaptureRefusal::None:
      return "can take part";
    case CaptureRefusal::NotShareable:
      return "has a buffer that is not device memory of its GPU or in an allocation the driver does not know";
    case CaptureRefusal::OutsideAllocation:
      return "has a buffer that extends past the end of its allocation";
    case CaptureRefusal::CacheFull:
      return "has exported as many allocations as MSCCLPP_COLL_CAPTURE_CACHE allows";
    case CaptureRefusal::ExportFailed:
      return "cannot export a buffer's allocation";
  }
  return "gave an unknown verdict";
}

std::string describeCall(const CaptureOffer& o) {
  const bool known = o.collective >= static_cast<int32_t>(Collective::AllReduce) &&
                     o.collective <= static_cast<int32_t>(Collective::SendRecv);
  return concat(known ? collectiveName(static_cast<Collective>(o.collective)) : "an unknown collective", " of ",
                o.segBytes, " bytes on ", o.nBuffers, " buffer(s)");
}

/// Serialized RegisteredMemory is far smaller; a larger length is not one.
constexpr size_t kMaxSerializedMemory = 64 << 10;

void putIdentity(ByteWriter& w, const AllocationIdentity& id) {
  w.put<uint64_t>(id.bufferId).put<uint64_t>(id.base).put<uint64_t>(id.size);
}

AllocationIdentity getIdentity(ByteReader& r) {
  AllocationIdentity id;
  id.bufferId = r.get<uint64_t>("buffer id");
  id.base = static_cast<uintptr_t>(r.get<uint64_t>("allocation base"));
  id.size = static_cast<size_t>(r.get<uint64_t>("allocation size"));
  return id;
}

constexpr size_t kIdentityBytes = 3 * sizeof(uint64_t);

}  // namespace

std::string captureVerdict(const std::vector<CaptureOffer>& offers) {
  MSCCLPP_CHECK_USAGE(!offers.empty(), "captureVerdict: no offers");
  const CaptureOffer& first = offers[0];
  for (size_t q = 1; q < offers.size(); ++q) {
    const CaptureOffer& o = offers[q];
    MSCCLPP_CHECK_USAGE(
        o.collective == first.collective && o.segBytes == first.segBytes && o.nBuffers == first.nBuffers,
        "graph capture: rank 0 captured ", describeCall(first), " where rank ", q, " captured ", describeCall(o),
        "; under graph capture every rank must capture the same collectives in the same order");
  }
  MSCCLPP_CHECK_USAGE(first.nBuffers >= 1 && first.nBuffers <= kMaxCaptureBuffers,
                      "graph capture: ", describeCall(first), " names ", first.nBuffers, " buffers; 1 to ",
                      kMaxCaptureBuffers, " are exchanged");
  for (size_t q = 0; q < offers.size(); ++q) {
    if (offers[q].refusal != static_cast<int32_t>(CaptureRefusal::None)) {
      return concat("rank ", q, " ", refusalText(offers[q].refusal));
    }
  }
  return "";
}

std::vector<char> encodeCaptureMessage(const CaptureMessage& message) {
  ByteWriter w;
  w.put<uint64_t>(message.gone.size());
  for (const AllocationIdentity& id : message.gone) putIdentity(w, id);
  w.put<uint64_t>(message.fresh.size());
  for (const auto& [id, serialized] : message.fresh) {
    putIdentity(w, id);
    w.putSizedBytes(serialized);
  }
  return w.take();
}

CaptureMessage decodeCaptureMessage(const std::vector<char>& bytes) {
  ByteReader r(bytes, "capture-time registration message");
  CaptureMessage m;
  const uint64_t nGone = r.get<uint64_t>("count of allocations gone");
  if (nGone > r.remaining() / kIdentityBytes) r.fail(concat(nGone, " allocations gone do not fit the message"));
  for (uint64_t i = 0; i < nGone; ++i) m.gone.push_back(getIdentity(r));
  const uint64_t nFresh = r.get<uint64_t>("count of new allocations");
  if (nFresh > static_cast<uint64_t>(kMaxCaptureBuffers)) {
    r.fail(concat(nFresh, " new allocations, more than the ", kMaxCaptureBuffers, " buffers of a call"));
  }
  for (uint64_t i = 0; i < nFresh; ++i) {
    const AllocationIdentity id = getIdentity(r);
    m.fresh.emplace_back(id, r.getSizedBytes(kMaxSerializedMemory, "serialized memory"));
  }
  r.expectEnd();
  return m;
}

std::vector<AllocationIdentity> CaptureCache::unexported(const std::vector<AllocationIdentity>& allocations) const {
  std::vector<AllocationIdentity> fresh;
  for (const AllocationIdentity& id : allocations) {
    if (exports_.count(id) == 0 && std::find(fresh.begin(), fresh.end(), id) == fresh.end()) fresh.push_back(id);
  }
  return fresh;
}

std::vector<AllocationIdentity> CaptureCache::gone(
    const std::function<AllocationIdentity(uintptr_t base)>& current) const {
  std::vector<AllocationIdentity> result;
  for (const auto& entry : exports_) {
    if (current(entry.first.base) != entry.first) result.push_back(entry.first);
  }
  return result;
}

bool CaptureCache::fits(size_t retired, size_t fresh) const {
  const size_t kept = exports_.size() - std::min(retired, exports_.size());
  return fresh <= limit_ && kept <= limit_ - fresh;
}

void CaptureCache::addExport(const AllocationIdentity& id, RegisteredMemory local) { exports_[id] = std::move(local); }

void CaptureCache::removeExport(const AllocationIdentity& id) { exports_.erase(id); }

const RegisteredMemory* CaptureCache::mapping(int peer, const AllocationIdentity& id) const {
  auto it = mappings_.find({peer, id});
  return it == mappings_.end() ? nullptr : &it->second;
}

void CaptureCache::addMapping(int peer, const AllocationIdentity& id, RegisteredMemory mapped) {
  mappings_[{peer, id}] = std::move(mapped);
}

void CaptureCache::removeMapping(int peer, const AllocationIdentity& id) { mappings_.erase({peer, id}); }

CaptureRegistry::CaptureRegistry(std::shared_ptr<Communicator> comm, int tag, size_t limit)
    : comm_(std::move(comm)),
      tag_(tag),
      rank_(comm_->bootstrap()->getRank()),
      nRanks_(comm_->bootstrap()->getNranks()),
      cache_(limit) {}

bool CaptureRegistry::capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    // No driver, or the legacy stream queried while another stream captures: not a capture this call
    // could join (its launch reports the latter).
    (void)cudaGetLastError();
    return false;
  }
  return status == cudaStreamCaptureStatusActive;
}

bool CaptureRegistry::exchange(Collective collective, size_t segBytes, std::initializer_list<CaptureBuffer> list) {
  const CaptureBuffer* buffers = list.begin();
  const size_t nBuffers = list.size();
  MSCCLPP_CHECK_USAGE(nBuffers > 0 && nBuffers <= static_cast<size_t>(kMaxCaptureBuffers), "graph capture: ", nBuffers,
                      " buffers; 1 to ", kMaxCaptureBuffers, " are exchanged");
  AvoidCudaGraphCaptureGuard relaxed;
  Bootstrap& bootstrap = *comm_->bootstrap();

  // This rank's offer.
  CaptureOffer mine;
  mine.collective = static_cast<int32_t>(collective);
  mine.segBytes = segBytes;
  mine.nBuffers = static_cast<int32_t>(nBuffers);
  CaptureRefusal refusal = CaptureRefusal::None;
  std::string why;
  const std::vector<AllocationIdentity> gone =
      cache_.gone([](uintptr_t base) { return BufferRegistry::identityOf(reinterpret_cast<const void*>(base)); });
  std::vector<AllocationIdentity> fresh;
  std::vector<RegisteredMemory> exported;
  // Whatever goes wrong here is this rank's refusal, told to every rank: none may wait for an offer
  // that never comes.
  try {
    std::vector<AllocationIdentity> allocations;
    for (size_t i = 0; i < nBuffers; ++i) {
      const CaptureBuffer& b = buffers[i];
      const AllocationIdentity id = BufferRegistry::identityOf(b.ptr);
      const uint64_t address = reinterpret_cast<uintptr_t>(b.ptr);
      CaptureOffer::Buffer& offered = mine.buffers[i];
      offered.bufferId = id.bufferId;
      offered.base = id.base;
      offered.size = id.size;
      offered.offset = address - id.base;
      if (refusal != CaptureRefusal::None) continue;
      why = shareRefusal(b.ptr, b.bytes);
      if (!why.empty()) {
        refusal = CaptureRefusal::NotShareable;
      } else if (address < id.base || offered.offset > id.size || b.bytes > id.size - offered.offset) {
        refusal = CaptureRefusal::OutsideAllocation;
        why = concat("[", b.ptr, ", +", b.bytes, ") extends past its allocation (", id.size, " bytes at ",
                     reinterpret_cast<void*>(id.base), ")");
      }
      allocations.push_back(id);
    }
    if (refusal == CaptureRefusal::None) {
      fresh = cache_.unexported(allocations);
      if (!cache_.fits(gone.size(), fresh.size())) {
        refusal = CaptureRefusal::CacheFull;
        why = concat(cache_.exports() - gone.size(), " allocations exported, ", fresh.size(), " more needed, bound ",
                     cache_.limit());
      }
    }
    for (size_t k = 0; refusal == CaptureRefusal::None && k < fresh.size(); ++k) {
      try {
        exported.push_back(
            comm_->registerMemory(reinterpret_cast<void*>(fresh[k].base), fresh[k].size, Transport::CudaIpc));
      } catch (const BaseError& err) {
        refusal = CaptureRefusal::ExportFailed;
        why = err.what();
      }
    }
  } catch (const BaseError& err) {
    refusal = CaptureRefusal::NotShareable;
    why = err.what();
  }
  mine.refusal = static_cast<int32_t>(refusal);
  if (refusal != CaptureRefusal::None) {
    LOG_INFO(EXEC, "collectives: rank ", rank_, " cannot register the buffers of a captured ",
             collectiveName(collective), ": ", why);
  }

  // The vote: every rank sees every offer.
  std::vector<CaptureOffer> offers(nRanks_);
  offers[rank_] = mine;
  bootstrap.allGather(offers.data(), sizeof(CaptureOffer));
  const std::string verdict = captureVerdict(offers);

  // Every rank hears which of a peer's allocations are gone, and, when all can take part, its new ones.
  CaptureMessage out;
  out.gone = gone;
  if (verdict.empty()) {
    for (size_t k = 0; k < fresh.size(); ++k) out.fresh.emplace_back(fresh[k], exported[k].serialize());
  }
  const std::vector<std::vector<char>> received = swapWithPeers(bootstrap, encodeCaptureMessage(out), tag_);
  for (const AllocationIdentity& id : gone) cache_.removeExport(id);
  std::string unmapped;
  std::vector<CaptureMessage> messages(nRanks_);
  for (int p = 0; p < nRanks_; ++p) {
    if (p == rank_) continue;
    try {
      messages[p] = decodeCaptureMessage(received[p]);
    } catch (const Error& err) {
      if (unmapped.empty()) unmapped = concat("rank ", p, ": ", err.what());
    }
    // Dropped before anything is mapped, so that a new allocation where a freed one was can be mapped.
    for (const AllocationIdentity& id : messages[p].gone) cache_.removeMapping(p, id);
  }
  if (!verdict.empty()) {
    LOG_INFO(EXEC, "collectives: a captured ", collectiveName(collective),
             " runs as on unregistered buffers on every rank: ", verdict);
    return false;
  }

  std::vector<std::pair<int, AllocationIdentity>> added;
  for (int p = 0; p < nRanks_; ++p) {
    for (auto& [id, serialized] : messages[p].fresh) {
      if (cache_.mapping(p, id) != nullptr) continue;
      RegisteredMemory mapped = mapPeerMemory(serialized, p, unmapped);
      if (mapped.data() == nullptr) continue;
      cache_.addMapping(p, id, std::move(mapped));
      added.emplace_back(p, id);
    }
  }
  // Every rank's buffers as this rank sees them; a peer allocation not mapped here fails the vote below.
  for (size_t i = 0; i < nBuffers; ++i) {
    for (int q = 0; q < nRanks_; ++q) {
      if (q == rank_) {
        buffers[i].view->ptr[q] = static_cast<char*>(const_cast<void*>(buffers[i].ptr));
        continue;
      }
      const CaptureOffer::Buffer& theirs = offers[q].buffers[i];
      const RegisteredMemory* mapped = cache_.mapping(q, CaptureOffer::identity(theirs));
      if (mapped == nullptr) {
        if (unmapped.empty()) unmapped = concat("rank ", q, ": its allocation is not mapped here");
        continue;
      }
      buffers[i].view->ptr[q] = static_cast<char*>(mapped->data()) + theirs.offset;
    }
  }

  // The second vote: every rank mapped every peer's new allocations.
  const std::vector<int64_t> mappedEverywhere = gatherFromEveryRank(bootstrap, unmapped.empty() ? 1 : 0);
  const auto failed = std::find(mappedEverywhere.begin(), mappedEverywhere.end(), 0);
  if (failed != mappedEverywhere.end()) {
    for (const auto& [p, id] : added) cache_.removeMapping(p, id);
    LOG_INFO(EXEC, "collectives: a captured ", collectiveName(collective),
             " runs as on unregistered buffers on every rank: rank ", failed - mappedEverywhere.begin(),
             " cannot map a peer's allocation", unmapped.empty() ? std::string() : concat(" (here: ", unmapped, ")"));
    return false;
  }
  for (size_t k = 0; k < fresh.size(); ++k) cache_.addExport(fresh[k], std::move(exported[k]));
  LOG_INFO(EXEC, "collectives: a captured ", collectiveName(collective), " runs on peers' buffers; ", added.size(),
           " peer allocation(s) mapped now, ", cache_.mappings(), " in all");
  return true;
}

}  // namespace collectives
}  // namespace mscclpp

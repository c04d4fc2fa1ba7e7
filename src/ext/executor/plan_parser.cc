// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Parsing a plan's text. Every field is checked for presence and type, every index against what it
// indexes, so that nothing the kernel later reads can point outside a table or a buffer; each error
// names the file, the rank, and where in the plan it was found.

#include <optional>
#include <stdexcept>
#include <vector>

#include "ext/executor/op_vocabulary.hpp"
#include "ext/executor/plan.hpp"
#include "ext/executor/plan_json.hpp"

namespace mscclpp {

using namespace executor;

namespace {

// Deeper nesting than any plan has is refused while parsing, before it can cost memory.
constexpr int kMaxJsonDepth = 32;
// Bounds that keep a malformed plan from asking for absurd tables.
constexpr int64_t kMaxChunks = 1 << 24;
constexpr int64_t kMaxBarriers = 4096;
constexpr int64_t kMaxThreadblocks = 65535;
constexpr size_t kMaxGpus = 4096;

/// The parts of one GPU's section that thread blocks refer to.
struct TbTables {
  std::vector<uint32_t> memoryChannels;  // tb-local id -> GPU-wide id
  std::vector<uint32_t> portChannels;
  std::vector<uint32_t> memoryBuffers;  // tb-local remote buffer id -> GPU-wide remote buffer index
  std::vector<uint32_t> portBuffers;
};

class Parser {
 public:
  Parser(PlanImpl& plan) : plan_(plan) {}

  void run(const json& root) {
    const Where w{plan_.path, plan_.rank, ""};
    if (!root.is_object()) w.fail(concat("the plan must be a JSON object, got ", root.type_name()));
    parseTopLevel(root, w);
    parseGpus(arrayMember(root, "gpus", w), w);
  }

 private:
  void parseTopLevel(const json& root, const Where& w) {
    plan_.name = stringMember(root, "name", w);
    plan_.collective = stringMember(root, "collective", w);
    const std::string protocol = stringMember(root, "protocol", w);
    if (protocol == "LL") {
      plan_.isUsingPacket = true;
    } else if (protocol != "Simple") {
      w.fail(concat("'protocol' is \"", protocol, "\": expected \"LL\" or \"Simple\""));
    }
    plan_.isInPlace = boolMember(root, "inplace", w);
    if (auto* v = optionalMember(root, "num_threads_per_block")) {
      plan_.nThreadsPerBlock = static_cast<int>(asInt(*v, "num_threads_per_block", w, 32, 1024));
    }
    if (auto* v = optionalMember(root, "min_message_size")) plan_.minMessageSize = asU64(*v, "min_message_size", w);
    if (auto* v = optionalMember(root, "max_message_size")) plan_.maxMessageSize = asU64(*v, "max_message_size", w);
    if (plan_.minMessageSize > plan_.maxMessageSize) {
      w.fail(concat("'min_message_size' (", plan_.minMessageSize, ") exceeds 'max_message_size' (",
                    plan_.maxMessageSize, ")"));
    }
    plan_.reuseResources = optionalBoolMember(root, "reuse_resources", w, false);
    plan_.doubleScratchBuffer = optionalBoolMember(root, "use_double_scratch_buffer", w, false);
    if (auto* v = optionalMember(root, "buffer_alignment")) {
      plan_.bufferAlignment = static_cast<uint64_t>(asInt(*v, "buffer_alignment", w, 4, 1 << 20));
      if (plan_.bufferAlignment % 4 != 0) w.fail("'buffer_alignment' must be a multiple of 4");
    }
  }

  /// Every GPU's chunk counts, channels and remote buffers (peers' sections are read for what this
  /// rank pairs with), and this rank's thread blocks.
  void parseGpus(const json& gpus, const Where& w) {
    if (gpus.empty()) w.fail("'gpus' is empty");
    if (gpus.size() > kMaxGpus) w.fail(concat("'gpus' lists ", gpus.size(), " GPUs"));
    const int nGpus = static_cast<int>(gpus.size());
    plan_.gpus.assign(nGpus, PlanGpu{});
    std::vector<const json*> byId(nGpus, nullptr);
    for (int i = 0; i < nGpus; ++i) {
      Where gw = w.at(concat("gpus[", i, "]"));
      const int id = static_cast<int>(intMember(gpus[i], "id", gw, 0, nGpus - 1));
      if (byId[id] != nullptr) gw.fail(concat("GPU id ", id, " appears twice"));
      byId[id] = &gpus[i];
    }
    if (plan_.rank < 0 || plan_.rank >= nGpus) {
      w.fail(concat("the plan is written for ranks 0..", nGpus - 1, ", not for rank ", plan_.rank));
    }
    for (int id = 0; id < nGpus; ++id) parseGpuHeader(*byId[id], id, w.at(concat("gpu ", id)));
    for (int id = 0; id < nGpus; ++id) parseRemoteBuffers(*byId[id], id, w.at(concat("gpu ", id)));
    parseOwnGpu(*byId[plan_.rank], w.at(concat("gpu ", plan_.rank)));
  }

  void parseGpuHeader(const json& g, int id, const Where& w) {
    PlanGpu& gpu = plan_.gpus[id];
    const int nGpus = static_cast<int>(plan_.gpus.size());
    gpu.id = id;
    gpu.inputChunks = static_cast<uint32_t>(intMember(g, "input_chunks", w, 0, kMaxChunks));
    gpu.outputChunks = static_cast<uint32_t>(intMember(g, "output_chunks", w, 0, kMaxChunks));
    gpu.scratchChunks = static_cast<uint32_t>(intMember(g, "scratch_chunks", w, 0, kMaxChunks));
    if (gpu.inputChunks == 0 && gpu.outputChunks == 0) w.fail("'input_chunks' and 'output_chunks' are both 0");
    const json* channels = optionalMember(g, "channels");
    if (channels == nullptr) return;
    if (!channels->is_array()) w.fail(concat("'channels' must be an array, got ", channels->type_name()));
    for (size_t c = 0; c < channels->size(); ++c) {
      Where cw = w.at(concat("channels[", c, "]"));
      const json& ch = (*channels)[c];
      // Plans of some generator versions name this key "type".
      const char* typeKey =
          ch.is_object() && !ch.contains("channel_type") && ch.contains("type") ? "type" : "channel_type";
      const ChannelType type = channelType(member(ch, typeKey, cw), typeKey, cw, false);
      const json& peers = arrayMember(ch, "connected_to", cw);
      for (size_t p = 0; p < peers.size(); ++p) {
        const int peer = static_cast<int>(asInt(peers[p], "connected_to", cw, 0, nGpus - 1));
        if (peer == id) cw.fail(concat("a channel connects GPU ", id, " to itself"));
        (type == ChannelType::Memory ? gpu.memoryChannels : gpu.portChannels).push_back({type, peer});
      }
    }
  }

  void parseRemoteBuffers(const json& g, int id, const Where& w) {
    PlanGpu& gpu = plan_.gpus[id];
    const int nGpus = static_cast<int>(plan_.gpus.size());
    const json* buffers = optionalMember(g, "remote_buffers");
    if (buffers == nullptr) return;
    if (!buffers->is_array()) w.fail(concat("'remote_buffers' must be an array, got ", buffers->type_name()));
    for (size_t b = 0; b < buffers->size(); ++b) {
      Where bw = w.at(concat("remote_buffers[", b, "]"));
      const json& rb = (*buffers)[b];
      PlanRemoteBuffer info{};
      info.rank = static_cast<int>(intMember(rb, "rank", bw, 0, nGpus - 1));
      if (info.rank == id) bw.fail("a remote buffer on the GPU itself");
      info.type = bufferType(member(rb, "type", bw), "type", bw);
      const json& access = arrayMember(rb, "access_channel_types", bw);
      if (access.empty()) bw.fail("'access_channel_types' is empty");
      for (const json& a : access) {
        (channelType(a, "access_channel_types", bw, false) == ChannelType::Memory ? info.memoryAccess
                                                                                  : info.portAccess) = true;
      }
      if (plan_.gpus[info.rank].chunks(info.type) == 0) {
        bw.fail(concat("GPU ", info.rank, " has no ", bufferName(info.type), " chunks"));
      }
      gpu.remoteBuffers.push_back(info);
    }
  }

  void parseOwnGpu(const json& g, const Where& w) {
    PlanGpu& gpu = plan_.gpus[plan_.rank];
    if (const json* sems = optionalMember(g, "semaphores")) {
      if (!sems->is_array()) w.fail(concat("'semaphores' must be an array, got ", sems->type_name()));
      for (size_t s = 0; s < sems->size(); ++s) {
        Where sw = w.at(concat("semaphores[", s, "]"));
        gpu.semaphoreInits.push_back(static_cast<int>(intMember((*sems)[s], "init_value", sw, 0, 1 << 30)));
      }
    }
    const json& tbs = arrayMember(g, "threadblocks", w);
    if (tbs.empty()) w.fail("'threadblocks' is empty");
    if (tbs.size() > static_cast<size_t>(kMaxThreadblocks)) w.fail(concat("'threadblocks' has ", tbs.size()));
    const int nTbs = static_cast<int>(tbs.size());
    gpu.threadblocks.assign(nTbs, {});
    std::vector<bool> seen(nTbs, false);
    for (int t = 0; t < nTbs; ++t) {
      Where tw = w.at(concat("threadblocks[", t, "]"));
      const int id = static_cast<int>(intMember(tbs[t], "id", tw, 0, nTbs - 1));
      if (seen[id]) tw.fail(concat("threadblock id ", id, " appears twice"));
      seen[id] = true;
      parseThreadblock(tbs[t], id, w.at(concat("threadblock ", id)));
    }
  }

  void parseThreadblock(const json& tb, int tbId, const Where& w) {
    PlanGpu& gpu = plan_.gpus[plan_.rank];
    TbTables tables;
    if (const json* chans = optionalMember(tb, "channels")) {
      if (!chans->is_array()) w.fail(concat("'channels' must be an array, got ", chans->type_name()));
      for (size_t c = 0; c < chans->size(); ++c) {
        Where cw = w.at(concat("channels[", c, "]"));
        const ChannelType type = channelType(member((*chans)[c], "channel_type", cw), "channel_type", cw, false);
        const auto& all = type == ChannelType::Memory ? gpu.memoryChannels : gpu.portChannels;
        auto& mine = type == ChannelType::Memory ? tables.memoryChannels : tables.portChannels;
        for (const json& id : arrayMember((*chans)[c], "channel_ids", cw)) {
          const int64_t n = static_cast<int64_t>(all.size());
          if (n == 0) cw.fail(concat("the GPU has no ", channelName(type), " channels"));
          mine.push_back(static_cast<uint32_t>(asInt(id, "channel_ids", cw, 0, n - 1)));
        }
      }
    }
    if (const json* refs = optionalMember(tb, "remote_buffer_refs")) {
      if (!refs->is_array()) w.fail(concat("'remote_buffer_refs' must be an array, got ", refs->type_name()));
      for (size_t r = 0; r < refs->size(); ++r) {
        Where rw = w.at(concat("remote_buffer_refs[", r, "]"));
        const ChannelType type =
            channelType(member((*refs)[r], "access_channel_type", rw), "access_channel_type", rw, false);
        auto& mine = type == ChannelType::Memory ? tables.memoryBuffers : tables.portBuffers;
        for (const json& id : arrayMember((*refs)[r], "remote_buffer_ids", rw)) {
          const int64_t n = static_cast<int64_t>(gpu.remoteBuffers.size());
          if (n == 0) rw.fail("the GPU has no remote buffers");
          const uint32_t b = static_cast<uint32_t>(asInt(id, "remote_buffer_ids", rw, 0, n - 1));
          const PlanRemoteBuffer& rb = gpu.remoteBuffers[b];
          if (!(type == ChannelType::Memory ? rb.memoryAccess : rb.portAccess)) {
            rw.fail(concat("remote buffer ", b, " is not accessible through ", channelName(type), " channels"));
          }
          mine.push_back(b);
        }
      }
    }
    const json& ops = arrayMember(tb, "ops", w);
    auto& out = gpu.threadblocks[tbId];
    for (size_t i = 0; i < ops.size(); ++i) {
      out.push_back(parseOp(ops[i], tables, w.at(concat("op ", i)), false));
    }
  }

  ChunkRef parseChunk(const json& b, const PlanOp& op, const TbTables& t, bool wantRemote, const Where& w) {
    const PlanGpu& gpu = plan_.gpus[plan_.rank];
    ChunkRef ref;
    if (!b.is_object()) w.fail(concat("a buffer reference must be an object, got ", b.type_name()));
    if (b.contains("switch_channel_id")) w.fail("switch channel buffers (NVLS multicast) are not supported");
    ref.index = static_cast<uint32_t>(intMember(b, "index", w, 0, kMaxChunks));
    ref.count = static_cast<uint32_t>(intMember(b, "size", w, 1, kMaxChunks));
    uint32_t limit = 0;
    if (wantRemote) {
      if (!b.contains("buffer_id")) w.fail("missing key 'buffer_id' (a remote buffer is expected here)");
      if (op.channelType == ChannelType::None) w.fail("a remote buffer needs a 'channel_type' of the operation");
      const auto& list = op.channelType == ChannelType::Memory ? t.memoryBuffers : t.portBuffers;
      if (list.empty()) {
        w.fail(concat("the threadblock has no remote buffers for ", channelName(op.channelType), " channels"));
      }
      const uint32_t local = static_cast<uint32_t>(intMember(b, "buffer_id", w, 0, int64_t(list.size()) - 1));
      ref.remote = true;
      ref.remoteBuffer = list[local];
      const PlanRemoteBuffer& rb = gpu.remoteBuffers[ref.remoteBuffer];
      ref.type = rb.type;
      limit = plan_.gpus[rb.rank].chunks(rb.type);
      if (uint64_t(ref.index) + ref.count > limit) {
        w.fail(concat("chunks [", ref.index, ", ", uint64_t(ref.index) + ref.count, ") of GPU ", rb.rank, "'s ",
                      bufferName(rb.type), " buffer, which has ", limit, " chunks"));
      }
    } else {
      if (b.contains("buffer_id")) w.fail("a remote buffer ('buffer_id') where a local one ('type') is expected");
      ref.type = bufferType(member(b, "type", w), "type", w);
      limit = gpu.chunks(ref.type);
      if (uint64_t(ref.index) + ref.count > limit) {
        w.fail(concat("chunks [", ref.index, ", ", uint64_t(ref.index) + ref.count, ") of the ", bufferName(ref.type),
                      " buffer, which has ", limit, " chunks"));
      }
    }
    return ref;
  }

  void parseRefs(const json& op, const char* key, OpShape::Kind kind, PlanOp& out, std::vector<ChunkRef>& refs,
                 const TbTables& t, const Where& w) {
    using K = OpShape::Kind;
    const json* list = optionalMember(op, key);
    if (kind == K::None) return;
    if (list == nullptr) w.fail(concat("missing key '", key, "'"));
    if (!list->is_array()) w.fail(concat("'", key, "' must be an array, got ", list->type_name()));
    if (list->empty()) w.fail(concat("'", key, "' is empty"));
    const size_t nLocalFirst = kind == K::LocalThenRemote ? 1 : kind == K::LocalLocalThenRemote ? 2 : 0;
    if (list->size() < nLocalFirst) w.fail(concat("'", key, "' needs at least ", nLocalFirst, " entries"));
    for (size_t i = 0; i < list->size(); ++i) {
      bool remote =
          kind == K::Remote || ((kind == K::LocalThenRemote || kind == K::LocalLocalThenRemote) && i >= nLocalFirst);
      refs.push_back(parseChunk((*list)[i], out, t, remote, w.at(concat(key, "[", i, "]"))));
    }
  }

  PlanOp parseOp(const json& op, const TbTables& t, const Where& at, bool inPipeline) {
    PlanOp out;
    if (!op.is_object()) at.fail(concat("an operation must be an object, got ", op.type_name()));
    const std::string name = stringMember(op, "name", at);
    const Where w = Where{at.path, at.rank, at.place + " (" + name + ")"};
    if (name == "glres") w.fail("not supported: multimem load-reduce-store needs NVLS, which is never used");
    const std::optional<OpType> type = opByName(name);
    if (!type) w.fail(concat("unknown operation \"", name, "\""));
    out.type = *type;
    const OpShape shape = shapeOf(out.type);
    if (const json* ct = optionalMember(op, "channel_type"))
      out.channelType = channelType(*ct, "channel_type", w, true);
    if (const json* ro = optionalMember(op, "reduce_op")) {
      if (!ro->is_string() || (ro->get<std::string>() != "sum" && ro->get<std::string>() != "SUM")) {
        w.fail(concat("'reduce_op' ", ro->dump(), " is not supported: only \"sum\""));
      }
    }
    if (const json* tbg = optionalMember(op, "tbg_info")) {
      out.tbgSize = static_cast<uint32_t>(intMember(*tbg, "tbg_size", w, 1, kMaxThreadblocks));
      out.tbgId = static_cast<uint32_t>(intMember(*tbg, "tb_id", w, 0, int64_t(out.tbgSize) - 1));
    }
    // channel_ids: the thread block's channels of the operation's type.
    if (const json* ids = optionalMember(op, "channel_ids")) {
      if (!ids->is_array()) w.fail(concat("'channel_ids' must be an array, got ", ids->type_name()));
      if (!ids->empty() && out.channelType == ChannelType::None) w.fail("'channel_ids' without a 'channel_type'");
      const auto& list = out.channelType == ChannelType::Memory ? t.memoryChannels : t.portChannels;
      for (const json& id : *ids) {
        if (list.empty()) {
          w.fail(concat("the threadblock has no ", channelName(out.channelType), " channels"));
        }
        out.indices.push_back(list[asInt(id, "channel_ids", w, 0, int64_t(list.size()) - 1)]);
      }
    }
    if (shape.needsChannels) {
      if (out.channelType == ChannelType::None) w.fail("missing key 'channel_type'");
      if (out.indices.empty()) w.fail("missing or empty 'channel_ids'");
      if (out.type == OpType::Flush && out.channelType != ChannelType::Port) w.fail("flush needs port channels");
    }
    parseRefs(op, "src_buff", shape.src, out, out.srcs, t, w);
    parseRefs(op, "dst_buff", shape.dst, out, out.dsts, t, w);
    checkShape(out, shape, w);

    parseOpSpecificFields(op, out, t, at, w, inPipeline);
    return out;
  }

  /// The fields only some operations have: a barrier's id and block count, semaphore ids, a pipeline's
  /// iteration and nested operations. `at` is the operation's place without its name (nested
  /// operations are placed under it), `w` the place with it.
  void parseOpSpecificFields(const json& op, PlanOp& out, const TbTables& t, const Where& at, const Where& w,
                             bool inPipeline) {
    switch (out.type) {
      case OpType::Barrier: {
        out.barrierId = static_cast<uint32_t>(intMember(op, "barrier_id", w, 0, kMaxBarriers - 1));
        const int64_t nTbs = static_cast<int64_t>(plan_.gpus[plan_.rank].threadblocks.size());
        out.barrierBlocks = static_cast<uint32_t>(intMember(op, "num_threadblocks", w, 1, nTbs));
        break;
      }
      case OpType::SemAcquire:
      case OpType::SemRelease: {
        const auto& inits = plan_.gpus[plan_.rank].semaphoreInits;
        const json& ids = arrayMember(op, "semaphore_ids", w);
        if (ids.empty()) w.fail("'semaphore_ids' is empty");
        for (const json& id : ids) {
          if (inits.empty()) w.fail("the GPU has no semaphores");
          out.indices.push_back(static_cast<uint32_t>(asInt(id, "semaphore_ids", w, 0, int64_t(inits.size()) - 1)));
        }
        break;
      }
      case OpType::Pipeline: {
        if (inPipeline) w.fail("a pipeline inside a pipeline");
        const json& ctx = member(op, "iter_context", w);
        out.unitSize = static_cast<uint64_t>(intMember(ctx, "unit_size", w, 1, INT64_MAX));
        if (out.unitSize % plan_.bufferAlignment != 0) {
          w.fail(concat("'unit_size' ", out.unitSize, " is not a multiple of the buffer alignment ",
                        plan_.bufferAlignment));
        }
        out.pipelineChunks = static_cast<uint32_t>(intMember(ctx, "num_chunks", w, 1, kMaxChunks));
        const json& inner = arrayMember(op, "ops", w);
        for (size_t i = 0; i < inner.size(); ++i) {
          out.inner.push_back(parseOp(inner[i], t, at.at(concat("pipeline op ", i)), true));
        }
        break;
      }
      case OpType::Nop:
      case OpType::Put:
      case OpType::PutPackets:
      case OpType::ReadPutPackets:
      case OpType::PutWithSignal:
      case OpType::PutWithSignalAndFlush:
      case OpType::Get:
      case OpType::Copy:
      case OpType::CopyPackets:
      case OpType::UnpackPackets:
      case OpType::Signal:
      case OpType::Wait:
      case OpType::Flush:
      case OpType::Reduce:
      case OpType::ReducePackets:
      case OpType::ReduceCopyPackets:
      case OpType::ReduceSend:
      case OpType::ReduceSendPackets:
      case OpType::ReduceCopySendPackets:
      case OpType::ReadReduce:
      case OpType::ReadReduceSend:
      case OpType::RelaxedSignal:
      case OpType::RelaxedWait:
        break;
    }
  }

  void checkShape(const PlanOp& op, const OpShape& shape, const Where& w) {
    const bool memory = op.channelType == ChannelType::Memory;
    const bool port = op.channelType == ChannelType::Port;
    auto sameCounts = [&](const std::vector<ChunkRef>& refs, size_t from) {
      for (size_t i = from; i < refs.size(); ++i) {
        if (refs[i].count != refs[0].count) {
          w.fail(concat("operands of different sizes: ", refs[0].count, " and ", refs[i].count, " chunks"));
        }
      }
    };
    auto requireScratch = [&](const ChunkRef& r, const char* what) {
      if (r.type != BufferType::Scratch) w.fail(concat(what, " must be in a scratch buffer (packets live there)"));
    };
    std::vector<ChunkRef> all = op.srcs;
    all.insert(all.end(), op.dsts.begin(), op.dsts.end());
    if (!all.empty()) sameCounts(all, 1);
    switch (op.type) {
      case OpType::Put:
      case OpType::PutWithSignal:
      case OpType::PutWithSignalAndFlush:
      case OpType::PutPackets:
      case OpType::ReadPutPackets:
        if (!memory && !port) w.fail("needs a 'channel_type' of \"memory\" or \"port\"");
        if (op.srcs.size() != op.dsts.size()) {
          w.fail(concat("'src_buff' has ", op.srcs.size(), " entries, 'dst_buff' ", op.dsts.size()));
        }
        if ((port || op.type == OpType::PutWithSignal || op.type == OpType::PutWithSignalAndFlush) &&
            op.indices.size() != op.dsts.size()) {
          w.fail(concat("'channel_ids' has ", op.indices.size(), " entries, 'dst_buff' ", op.dsts.size()));
        }
        if (op.type == OpType::PutPackets || op.type == OpType::ReadPutPackets) {
          for (const auto& d : op.dsts) requireScratch(d, "a packet destination");
          if (op.type == OpType::ReadPutPackets || port) {
            for (const auto& s : op.srcs) requireScratch(s, "a packet source");
          }
        }
        break;
      case OpType::Get:
      case OpType::ReadReduce:
      case OpType::ReadReduceSend:
        if (!memory) w.fail("needs a 'channel_type' of \"memory\" (peers' memory is read directly)");
        if (op.type == OpType::Get && op.srcs.size() != op.dsts.size()) {
          w.fail(concat("'src_buff' has ", op.srcs.size(), " entries, 'dst_buff' ", op.dsts.size()));
        }
        break;
      case OpType::Copy:
      case OpType::CopyPackets:
      case OpType::UnpackPackets:
        if (op.srcs.size() != 1 || op.dsts.size() != 1) w.fail("needs one 'src_buff' and one 'dst_buff' entry");
        if (op.type == OpType::CopyPackets) requireScratch(op.dsts[0], "the packet destination");
        if (op.type == OpType::UnpackPackets) requireScratch(op.srcs[0], "the packet source");
        break;
      case OpType::Reduce:
      case OpType::ReducePackets:
      case OpType::ReduceCopyPackets:
        if (op.dsts.size() != (op.type == OpType::ReduceCopyPackets ? 2u : 1u)) {
          w.fail(concat("'dst_buff' has ", op.dsts.size(), " entries"));
        }
        break;
      case OpType::ReduceSend:
      case OpType::ReduceSendPackets:
      case OpType::ReduceCopySendPackets:
        if (!memory) w.fail("needs a 'channel_type' of \"memory\" (results are written to peers directly)");
        break;
      case OpType::Nop:
      case OpType::Barrier:
      case OpType::Signal:
      case OpType::Wait:
      case OpType::Flush:
      case OpType::RelaxedSignal:
      case OpType::RelaxedWait:
      case OpType::Pipeline:
      case OpType::SemRelease:
      case OpType::SemAcquire:
        break;
    }
    if (shape.packets && op.type != OpType::PutPackets && op.type != OpType::ReadPutPackets &&
        op.type != OpType::CopyPackets && op.type != OpType::UnpackPackets) {
      for (size_t i = 1; i < op.srcs.size(); ++i) requireScratch(op.srcs[i], "a packet source");
      if (op.type == OpType::ReduceCopyPackets || op.type == OpType::ReduceCopySendPackets) {
        requireScratch(op.dsts[1], "the packet copy");
      }
      for (size_t i = (op.type == OpType::ReduceCopySendPackets ? 2 : 1); i < op.dsts.size(); ++i) {
        requireScratch(op.dsts[i], "a packet destination");
      }
    }
    if (shape.packets && !plan_.isUsingPacket) w.fail("a packet operation in a plan whose protocol is not \"LL\"");
    // The reductions keep their operands' addresses in registers, at most this many per side.
    constexpr size_t kMaxReduceOperands = 32;
    if (shape.reduces && (op.srcs.size() > kMaxReduceOperands || op.dsts.size() > kMaxReduceOperands)) {
      w.fail(concat("more than ", kMaxReduceOperands, " 'src_buff' or 'dst_buff' entries in a reduction"));
    }
  }

  PlanImpl& plan_;
};

}  // namespace

void ExecutionPlan::Impl::parse(const std::string& text) {
  json root;
  try {
    json::parser_callback_t depthLimit = [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth) throw std::length_error("the JSON nests deeper than any plan");
      return true;
    };
    root = json::parse(text, depthLimit);
  } catch (const json::exception& e) {
    Where{path, rank, ""}.fail(concat("not valid JSON: ", e.what()));
  } catch (const std::length_error& e) {
    Where{path, rank, ""}.fail(e.what());
  }
  Parser(*this).run(root);
}

}  // namespace mscclpp

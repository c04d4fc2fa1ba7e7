// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Built with MSCCLPP_USE_IB only; ib_unavailable.cc stands in for it otherwise.
#if defined(MSCCLPP_USE_IB)

#include "transport/ib/ibverbs.hpp"

#include <dlfcn.h>

#include <cstring>
#include <mscclpp/env.hpp>

#include "common/checks.hpp"

namespace mscclpp {
namespace {

// Symbols resolved from libibverbs; the inline verbs below go through the context's ops instead.
struct RealVerbs {
  decltype(&::ibv_get_device_list) getDeviceList = nullptr;
  decltype(&::ibv_free_device_list) freeDeviceList = nullptr;
  decltype(&::ibv_get_device_name) getDeviceName = nullptr;
  decltype(&::ibv_open_device) openDevice = nullptr;
  decltype(&::ibv_close_device) closeDevice = nullptr;
  decltype(&::ibv_query_device) queryDevice = nullptr;
  // The exported ibv_query_port takes the old, shorter attribute struct: only the fallback uses it.
  int (*compatQueryPort)(ibv_context*, uint8_t, ibv_port_attr*) = nullptr;
  decltype(&::ibv_query_gid) queryGid = nullptr;
  decltype(&::ibv_alloc_pd) allocPd = nullptr;
  decltype(&::ibv_dealloc_pd) deallocPd = nullptr;
  ibv_mr* (*regMr)(ibv_pd*, void*, size_t, int) = nullptr;
  decltype(&::ibv_reg_dmabuf_mr) regDmabufMr = nullptr;
  decltype(&::ibv_dereg_mr) deregMr = nullptr;
  decltype(&::ibv_create_cq) createCq = nullptr;
  decltype(&::ibv_destroy_cq) destroyCq = nullptr;
  decltype(&::ibv_create_qp) createQp = nullptr;
  decltype(&::ibv_modify_qp) modifyQp = nullptr;
  decltype(&::ibv_destroy_qp) destroyQp = nullptr;
  decltype(&::ibv_wc_status_str) wcStatusStr = nullptr;
};

RealVerbs real;

int realQueryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) {
  // As verbs.h's ___ibv_query_port: the extended op where the provider has one.
  verbs_context* vctx = verbs_get_ctx_op(context, query_port);
  if (vctx != nullptr) return vctx->query_port(context, port, attr, sizeof(*attr));
  std::memset(attr, 0, sizeof(*attr));
  return real.compatQueryPort(context, port, attr);
}

int realPostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr) { return qp->context->ops.post_send(qp, wr, badWr); }

int realPostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr) { return qp->context->ops.post_recv(qp, wr, badWr); }

int realPollCq(ibv_cq* cq, int numEntries, ibv_wc* wc) { return cq->context->ops.poll_cq(cq, numEntries, wc); }

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (out != nullptr) return true;
  missing += (missing.empty() ? "" : ",") + std::string(name);
  return false;
}

IbvTable realTable() {
  IbvTable t{};
  t.getDeviceList = real.getDeviceList;
  t.freeDeviceList = real.freeDeviceList;
  t.getDeviceName = real.getDeviceName;
  t.openDevice = real.openDevice;
  t.closeDevice = real.closeDevice;
  t.queryDevice = real.queryDevice;
  t.queryPort = realQueryPort;
  t.queryGid = real.queryGid;
  t.allocPd = real.allocPd;
  t.deallocPd = real.deallocPd;
  t.regMr = real.regMr;
  t.regDmabufMr = real.regDmabufMr;
  t.deregMr = real.deregMr;
  t.createCq = real.createCq;
  t.destroyCq = real.destroyCq;
  t.createQp = real.createQp;
  t.modifyQp = real.modifyQp;
  t.destroyQp = real.destroyQp;
  t.postSend = realPostSend;
  t.postRecv = realPostRecv;
  t.pollCq = realPollCq;
  t.wcStatusStr = real.wcStatusStr;
  return t;
}

IbVerbs load() {
  IbVerbs verbs;
  std::vector<std::string> candidates;
  if (!env()->ibvSo.empty()) {
    candidates.push_back(env()->ibvSo);
  } else {
    candidates = {"libibverbs.so.1", "libibverbs.so"};
  }
  void* handle = nullptr;
  std::string errors;
  for (const auto& name : candidates) {
    verbs.library = name;
    // RTLD_NODELETE: verbs objects may be destroyed by static destructors after any unloading point.
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle != nullptr) break;
    const char* err = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(err ? err : name + ": not found");
  }
  if (handle == nullptr) {
    verbs.unavailableReason = concat("cannot load the verbs library (", errors, ")");
    return verbs;
  }
  if (auto entry = reinterpret_cast<IbvProviderEntryFn>(dlsym(handle, kIbvProviderEntry))) {
    verbs.table = entry(kIbvTableVersion);
    if (verbs.table == nullptr) {
      verbs.unavailableReason =
          concat(verbs.library, ": ", kIbvProviderEntry, " refused table version ", kIbvTableVersion);
    }
    return verbs;
  }
  std::string missing;
  resolve(handle, "ibv_get_device_list", real.getDeviceList, missing);
  resolve(handle, "ibv_free_device_list", real.freeDeviceList, missing);
  resolve(handle, "ibv_get_device_name", real.getDeviceName, missing);
  resolve(handle, "ibv_open_device", real.openDevice, missing);
  resolve(handle, "ibv_close_device", real.closeDevice, missing);
  resolve(handle, "ibv_query_device", real.queryDevice, missing);
  resolve(handle, "ibv_query_port", real.compatQueryPort, missing);
  resolve(handle, "ibv_query_gid", real.queryGid, missing);
  resolve(handle, "ibv_alloc_pd", real.allocPd, missing);
  resolve(handle, "ibv_dealloc_pd", real.deallocPd, missing);
  resolve(handle, "ibv_reg_mr", real.regMr, missing);
  resolve(handle, "ibv_dereg_mr", real.deregMr, missing);
  resolve(handle, "ibv_create_cq", real.createCq, missing);
  resolve(handle, "ibv_destroy_cq", real.destroyCq, missing);
  resolve(handle, "ibv_create_qp", real.createQp, missing);
  resolve(handle, "ibv_modify_qp", real.modifyQp, missing);
  resolve(handle, "ibv_destroy_qp", real.destroyQp, missing);
  resolve(handle, "ibv_wc_status_str", real.wcStatusStr, missing);
  if (!missing.empty()) {
    verbs.unavailableReason = concat(verbs.library, " lacks ", missing);
    return verbs;
  }
  // Optional (rdma-core 34+): without it GPU memory needs peer memory (nvidia_peermem).
  std::string optional;
  resolve(handle, "ibv_reg_dmabuf_mr", real.regDmabufMr, optional);
  static const IbvTable table = realTable();
  verbs.table = &table;
  return verbs;
}

}  // namespace

const IbVerbs& ibVerbs() {
  static const IbVerbs verbs = load();
  return verbs;
}

const IbvTable& ibv() {
  const IbVerbs& verbs = ibVerbs();
  if (verbs.table == nullptr) MSCCLPP_THROW(InvalidUsage, "IB is unavailable: ", verbs.unavailableReason);
  return *verbs.table;
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_USE_IB)

// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The verbs the IB transport calls, as one table of function pointers. Several verbs
// (ibv_post_send, ibv_poll_cq, ibv_query_port...) are static inline in infiniband/verbs.h and dispatch
// through the device context's ops table, so there is no symbol to resolve for them; going through
// this table instead gives one seam for two providers:
//   - libibverbs itself (libibverbs.so.1 or MSCCLPP_IBV_SO): the exported symbols are resolved with
//     dlsym and the inline verbs are called through the context's ops, as verbs.h does;
//   - any library named by MSCCLPP_IBV_SO that exports kIbvProviderEntry: it returns its own table.
//     The test tree's substitute provider (test/ib_substitute/) is one; it needs no kernel support.
// The structures are those of infiniband/verbs.h; a provider fills in the fields the transport reads.

#ifndef MSCCLPP_TRANSPORT_IB_IBV_TABLE_HPP_
#define MSCCLPP_TRANSPORT_IB_IBV_TABLE_HPP_

#include <infiniband/verbs.h>

#include <cstdint>

namespace mscclpp {

/// Bumped when the table's layout changes; a provider returns nullptr for a version it does not know.
constexpr uint32_t kIbvTableVersion = 1;

/// `extern "C" const IbvTable* mscclppIbvProvider(uint32_t version)`.
constexpr const char* kIbvProviderEntry = "mscclppIbvProvider";

struct IbvTable {
  /// Like libibverbs: nullptr with errno set (ENOSYS without kernel support) or a list (maybe empty).
  ibv_device** (*getDeviceList)(int* numDevices);
  void (*freeDeviceList)(ibv_device** list);
  const char* (*getDeviceName)(ibv_device* device);
  ibv_context* (*openDevice)(ibv_device* device);
  int (*closeDevice)(ibv_context* context);
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr);
  int (*queryPort)(ibv_context* context, uint8_t port, ibv_port_attr* attr);
  int (*queryGid)(ibv_context* context, uint8_t port, int index, ibv_gid* gid);
  ibv_pd* (*allocPd)(ibv_context* context);
  int (*deallocPd)(ibv_pd* pd);
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access);
  /// nullptr where the provider has no DMA-BUF registration.
  ibv_mr* (*regDmabufMr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access);
  int (*deregMr)(ibv_mr* mr);
  ibv_cq* (*createCq)(ibv_context* context, int cqe, void* cqContext, ibv_comp_channel* channel, int compVector);
  int (*destroyCq)(ibv_cq* cq);
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int attrMask);
  int (*destroyQp)(ibv_qp* qp);
  int (*postSend)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr);
  int (*postRecv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr);
  int (*pollCq)(ibv_cq* cq, int numEntries, ibv_wc* wc);
  const char* (*wcStatusStr)(ibv_wc_status status);
};

using IbvProviderEntryFn = const IbvTable* (*)(uint32_t version);

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_IB_IBV_TABLE_HPP_

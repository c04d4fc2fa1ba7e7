// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Built with MSCCLPP_USE_IB only; ib_unavailable.cc stands in for it otherwise.
#if defined(MSCCLPP_USE_IB)

#include "transport/ib/ib_device.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mscclpp/env.hpp>

#include "common/checks.hpp"
#include "gpu/driver_api.hpp"
#include "transport/ib/ibverbs.hpp"

namespace mscclpp {
namespace {

const char* portStateName(ibv_port_state state) {
  switch (state) {
    case IBV_PORT_NOP:
      return "NOP";
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
  }
  return "unknown";
}

/// The provider's device list, freed on scope exit.
class DeviceList {
 public:
  DeviceList() {
    const IbvTable& t = ibv();
    errno = 0;
    list_ = t.getDeviceList(&count_);
    error_ = errno;
    if (list_ == nullptr) count_ = 0;
  }
  ~DeviceList() {
    if (list_ != nullptr) ibv().freeDeviceList(list_);
  }
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  int count() const { return count_; }
  ibv_device* operator[](int i) const { return list_[i]; }
  /// Why there is no list at all (ENOSYS: no kernel support), or 0.
  int error() const { return list_ == nullptr ? error_ : 0; }

 private:
  ibv_device** list_ = nullptr;
  int count_ = 0;
  int error_ = 0;
};

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<std::string> ibDeviceNames() {
  if (!env()->hcaDevices.empty()) return splitList(env()->hcaDevices, ',');
  if (ibVerbs().table == nullptr) return {};
  DeviceList list;
  if (list.error() != 0) {
    LOG_INFO(CONN, "IB: no verbs devices: ibv_get_device_list failed with ", errnoName(list.error()));
  }
  std::vector<std::string> names;
  for (int i = 0; i < list.count(); ++i) names.push_back(ibv().getDeviceName(list[i]));
  return names;
}

int ibTransportIndex(Transport transport) {
  const int index = static_cast<int>(transport) - static_cast<int>(Transport::IB0);
  MSCCLPP_CHECK_USAGE(AllIBTransports.has(transport), transport, " is not an IB transport");
  return index;
}

std::string ibDeviceNameOf(Transport transport) {
  const int index = ibTransportIndex(transport);
  std::vector<std::string> names = ibDeviceNames();
  if (index < static_cast<int>(names.size())) return names[index];
  if (ibVerbs().table == nullptr && env()->hcaDevices.empty()) {
    MSCCLPP_THROW(InvalidUsage, transport, ": IB is unavailable: ", ibVerbs().unavailableReason);
  }
  MSCCLPP_THROW(InvalidUsage, transport, " has no device: there are ", names.size(), " IB device(s) (",
                joinNames(names), env()->hcaDevices.empty() ? "" : ", from MSCCLPP_HCA_DEVICES", ")");
}

int getIBDeviceCount() { return static_cast<int>(ibDeviceNames().size()); }

std::string getIBDeviceName(Transport ibTransport) { return ibDeviceNameOf(ibTransport); }

Transport getIBTransportByDeviceName(const std::string& ibDeviceName) {
  std::vector<std::string> names = ibDeviceNames();
  auto it = std::find(names.begin(), names.end(), ibDeviceName);
  const int index = static_cast<int>(it - names.begin());
  MSCCLPP_CHECK_USAGE(it != names.end() && index < 8, "IB device '", ibDeviceName,
                      "' is none of IB0..IB7 (devices: ", joinNames(names), ")");
  return static_cast<Transport>(static_cast<int>(Transport::IB0) + index);
}

IbDevice::IbDevice(const std::string& name) : name_(name) {
  const IbvTable& t = ibv();
  DeviceList list;
  ibv_device* device = nullptr;
  std::vector<std::string> seen;
  for (int i = 0; i < list.count() && device == nullptr; ++i) {
    seen.push_back(t.getDeviceName(list[i]));
    if (seen.back() == name) device = list[i];
  }
  if (device == nullptr) {
    MSCCLPP_THROW(InvalidUsage, "IB device '", name, "' not found (devices: ", joinNames(seen),
                  list.error() ? concat("; ibv_get_device_list: ", errnoName(list.error())) : std::string(), ")");
  }
  context_ = t.openDevice(device);
  if (context_ == nullptr) throw IbError(concat("ibv_open_device(", name, ") failed"), errno);
  if (int rc = t.queryDevice(context_, &attr_); rc != 0) {
    t.closeDevice(context_);
    throw IbError(concat("ibv_query_device(", name, ") failed"), rc);
  }
  pd_ = t.allocPd(context_);
  if (pd_ == nullptr) {
    int err = errno;
    t.closeDevice(context_);
    throw IbError(concat("ibv_alloc_pd(", name, ") failed"), err);
  }
}

IbDevice::~IbDevice() {
  const IbvTable& t = ibv();
  if (int rc = t.deallocPd(pd_); rc != 0) LOG_WARN(CONN, "ibv_dealloc_pd(", name_, "): ", errnoName(rc));
  if (int rc = t.closeDevice(context_); rc != 0) LOG_WARN(CONN, "ibv_close_device(", name_, "): ", errnoName(rc));
}

int IbDevice::selectPort(int requested, ibv_port_attr* attr) const {
  const IbvTable& t = ibv();
  const int numPorts = attr_.phys_port_cnt;
  auto query = [&](int port) {
    if (int rc = t.queryPort(context_, static_cast<uint8_t>(port), attr); rc != 0) {
      throw IbError(concat("ibv_query_port(", name_, ", ", port, ") failed"), rc);
    }
  };
  if (requested != -1) {
    MSCCLPP_CHECK_USAGE(requested >= 1 && requested <= numPorts, "IB device ", name_, " has ports 1..", numPorts,
                        ", not ", requested);
    query(requested);
    MSCCLPP_CHECK_USAGE(attr->state == IBV_PORT_ACTIVE, "IB device ", name_, " port ", requested, " is ",
                        portStateName(attr->state), ", not ACTIVE");
    return requested;
  }
  std::string states;
  for (int port = 1; port <= numPorts; ++port) {
    query(port);
    if (attr->state == IBV_PORT_ACTIVE) return port;
    states += concat(states.empty() ? "" : ", ", "port ", port, " ", portStateName(attr->state));
  }
  MSCCLPP_THROW(InvalidUsage, "IB device ", name_, " has no ACTIVE port (", states.empty() ? "no ports" : states, ")");
}

ibv_gid IbDevice::gid(int port, int index, const ibv_port_attr& attr) const {
  MSCCLPP_CHECK_USAGE(index >= 0 && index < attr.gid_tbl_len, "IB device ", name_, " port ", port, ": GID index ",
                      index, " is outside its table of ", attr.gid_tbl_len, " (EndpointConfig::Ib::gidIndex)");
  ibv_gid gid{};
  if (int rc = ibv().queryGid(context_, static_cast<uint8_t>(port), index, &gid); rc != 0) {
    throw IbError(concat("ibv_query_gid(", name_, ", port ", port, ", index ", index, ") failed"), rc > 0 ? rc : errno);
  }
  static const ibv_gid zero{};
  MSCCLPP_CHECK_USAGE(std::memcmp(&gid, &zero, sizeof(gid)) != 0, "IB device ", name_, " port ", port, ": GID index ",
                      index, " is empty; pick a configured one with EndpointConfig::Ib::gidIndex");
  return gid;
}

IbMr::IbMr(std::shared_ptr<IbDevice> device, void* addr, size_t size, int gpuId)
    : device_(std::move(device)), addr_(addr) {
  const IbvTable& t = ibv();
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                     IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;
  if (gpuId < 0) {
    mr_ = t.regMr(device_->pd(), addr, size, access);
    if (mr_ == nullptr) {
      throw IbError(concat("ibv_reg_mr of host memory ", addr, " (", size, " bytes) on ", device_->name(), " failed"),
                    errno);
    }
    return;
  }
  std::string dmabufWhy;
  if (t.regDmabufMr == nullptr) {
    dmabufWhy = "the verbs library has no ibv_reg_dmabuf_mr";
  } else {
#if defined(__HIP_PLATFORM_AMD__)
    // HIP 5 can neither export device memory as a DMA-BUF nor say whether a GPU could: registration
    // takes the peer-memory path below, as on a CUDA GPU without DMA-BUF support.
    dmabufWhy = "HIP has no DMA-BUF export of device memory";
#else
    CUdevice cuDevice;
    int supported = 0;
    CUresult r = cu::cuDeviceGet(&cuDevice, gpuId);
    if (r == CUDA_SUCCESS) r = cu::cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, cuDevice);
    CUdeviceptr base = 0;
    size_t baseSize = 0;
    if (r != CUDA_SUCCESS) {
      dmabufWhy = concat("cannot ask GPU ", gpuId, " for DMA-BUF support: ", cuResultName(r));
    } else if (!supported) {
      dmabufWhy = concat("GPU ", gpuId, " or its driver does not support DMA-BUF");
    } else if ((r = cu::cuMemGetAddressRange(&base, &baseSize, reinterpret_cast<CUdeviceptr>(addr))) != CUDA_SUCCESS) {
      dmabufWhy = concat("cuMemGetAddressRange: ", cuResultName(r));
    } else {
      // The handle covers the whole allocation; the region is the registered range inside it, at its
      // own address. The call wants a page-aligned size, and an allocation's reported size is the
      // requested one (cudaMalloc(4 MiB + 3) reports 4 MiB + 3); the driver maps allocations in whole
      // granules of at least a page, so rounding up stays inside the allocation's mapping.
      const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
      const size_t handleSize = (baseSize + page - 1) / page * page;
      int fd = -1;
      r = cu::cuMemGetHandleForAddressRange(&fd, base, handleSize, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
      if (r != CUDA_SUCCESS) {
        dmabufWhy = concat("cuMemGetHandleForAddressRange: ", cuResultName(r));
      } else {
        const uint64_t offset = reinterpret_cast<uintptr_t>(addr) - deviceAddress(base);
        mr_ = t.regDmabufMr(device_->pd(), offset, size, reinterpret_cast<uint64_t>(addr), fd, access);
        const int err = errno;
        ::close(fd);
        if (mr_ != nullptr) {
          path_ = "dma-buf";
          return;
        }
        dmabufWhy = concat("ibv_reg_dmabuf_mr: ", errnoName(err));
      }
    }
#endif
  }
  mr_ = t.regMr(device_->pd(), addr, size, access);
  if (mr_ == nullptr) {
    throw IbError(concat("cannot register GPU ", gpuId, " memory ", addr, " (", size, " bytes) on ", device_->name(),
                         ": DMA-BUF was not used (", dmabufWhy,
                         "), and ibv_reg_mr, which needs peer memory (nvidia_peermem), failed"),
                  errno);
  }
  path_ = "peer memory";
  LOG_INFO(CONN, "IB: GPU memory ", addr, " registered through peer memory; DMA-BUF not used: ", dmabufWhy);
}

IbMr::~IbMr() {
  if (int rc = ibv().deregMr(mr_); rc != 0) LOG_WARN(CONN, "ibv_dereg_mr on ", device_->name(), ": ", errnoName(rc));
}

}  // namespace mscclpp

#endif  // defined(MSCCLPP_USE_IB)

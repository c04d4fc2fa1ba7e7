// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TRANSPORT_IB_IB_DEVICE_HPP_
#define MSCCLPP_TRANSPORT_IB_IB_DEVICE_HPP_

#include <memory>
#include <mscclpp/core.hpp>
#include <string>
#include <vector>

#include "transport/ib/ibv_table.hpp"

namespace mscclpp {

/// The names that IB0..IB7 stand for: MSCCLPP_HCA_DEVICES (entry i is IBi) when set, else the verbs
/// devices in the provider's order. Empty when IB is unavailable or there is no device.
std::vector<std::string> ibDeviceNames();

/// Index of an IB transport (IB3 -> 3); Error(InvalidUsage) for any other transport.
int ibTransportIndex(Transport transport);

/// The device name IBx stands for; Error(InvalidUsage) naming the devices there are when x is out of range.
std::string ibDeviceNameOf(Transport transport);

/// An open verbs device and its protection domain (everything of one IBx in a Context shares them).
class IbDevice {
 public:
  /// Opens `name`; Error(InvalidUsage) when IB is unavailable or there is no such device.
  explicit IbDevice(const std::string& name);
  ~IbDevice();
  IbDevice(const IbDevice&) = delete;
  IbDevice& operator=(const IbDevice&) = delete;

  const std::string& name() const { return name_; }
  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  const ibv_device_attr& attr() const { return attr_; }
  bool hasAtomics() const { return attr_.atomic_cap != IBV_ATOMIC_NONE; }

  /// `requested` if it is active, or the first active port for -1. Error(InvalidUsage) naming the
  /// state of the port (or of every port) otherwise, so a down link fails here instead of hanging later.
  int selectPort(int requested, ibv_port_attr* attr) const;

  /// GID `index` of `port`; Error(InvalidUsage) when the index is outside the table or the entry is empty.
  ibv_gid gid(int port, int index, const ibv_port_attr& attr) const;

 private:
  std::string name_;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_device_attr attr_{};
};

/// A registered memory region. Host memory goes through ibv_reg_mr. GPU memory goes through DMA-BUF
/// (cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr) where the GPU and the provider support it,
/// else through ibv_reg_mr, which works on GPU memory only with peer memory (nvidia_peermem). The
/// region's iova is the buffer's own address, so peers address it with the original pointer.
class IbMr {
 public:
  IbMr(std::shared_ptr<IbDevice> device, void* addr, size_t size, int gpuId);
  ~IbMr();
  IbMr(const IbMr&) = delete;
  IbMr& operator=(const IbMr&) = delete;

  uint64_t addr() const { return reinterpret_cast<uint64_t>(addr_); }
  uint32_t lkey() const { return mr_->lkey; }
  uint32_t rkey() const { return mr_->rkey; }
  /// "dma-buf", "peer memory" or "host memory": how it was registered.
  const char* path() const { return path_; }

 private:
  std::shared_ptr<IbDevice> device_;
  void* addr_;
  ibv_mr* mr_ = nullptr;
  const char* path_ = "host memory";
};

}  // namespace mscclpp

#endif  // MSCCLPP_TRANSPORT_IB_IB_DEVICE_HPP_

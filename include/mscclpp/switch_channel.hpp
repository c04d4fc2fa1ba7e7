// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// NVLink SHARP (NVLS) collectives: an NvlsConnection is a multicast object that every GPU of a group
// binds memory to, and a SwitchChannel is one GPU's view of such memory (device side in
// switch_channel_device.hpp).
//
// Multicast objects are not created by this build. Creating one can take the GPUs of a shared host
// out of service, so everything that would create or import one (the NvlsConnection constructors and
// methods, connectNvlsCollective) throws Error(InvalidUsage) "NVLS is not supported ...", naming the
// reason: the GPU does not advertise multicast, MSCCLPP_ENABLE_NVLS=1 is not set, or (both being true)
// this build has no multicast implementation. isNvlsSupported() (gpu_utils.hpp) is false accordingly.
// A SwitchChannel built from pointers the caller already has works as a plain value.

#ifndef MSCCLPP_SWITCH_CHANNEL_HPP_
#define MSCCLPP_SWITCH_CHANNEL_HPP_

#include <cstddef>
#include <memory>
#include <vector>

#include "gpu_utils.hpp"
#include "switch_channel_device.hpp"

namespace mscclpp {

class NvlsConnection;

/// A buffer of this GPU (`devicePtr`) and its multicast address (`mcPtr`), `bufferSize` bytes.
struct SwitchChannel {
 private:
  void* devicePtr_;
  std::shared_ptr<char> mcPtr_;
  size_t bufferSize_;

 public:
  using DeviceHandle = SwitchChannelDeviceHandle;

  SwitchChannel(void* devicePtr, std::shared_ptr<char> mcPtr, size_t bufferSize)
      : devicePtr_(devicePtr), mcPtr_(std::move(mcPtr)), bufferSize_(bufferSize) {}

  /// The three fields, for a kernel.
  DeviceHandle deviceHandle() const;
  void* getDevicePtr();

  friend class NvlsConnection;
};

/// A multicast object shared by `numDevices` GPUs. Refused in this build (see above).
class NvlsConnection {
 public:
  /// Creates a multicast object of `bufferSize` bytes for `numDevices` GPUs.
  NvlsConnection(size_t bufferSize, int numDevices);
  /// Imports a multicast object serialized by its creator.
  NvlsConnection(const std::vector<char>& data);
  NvlsConnection() = delete;
  std::vector<char> serialize();

  /// Adds the current (or the given) GPU to the object; every member synchronizes with the others
  /// after creating the connection and before adding devices.
  void addDevice();
  void addDevice(int cudaDeviceId);

  /// Binds `size` bytes of memory allocated by GpuBuffer at `devicePtr` to the multicast object.
  SwitchChannel bindAllocatedMemory(CUdeviceptr devicePtr, size_t size);

  size_t getMultiCastMinGranularity();

 private:
  class Impl;
  std::shared_ptr<Impl> pimpl_;
};

class Communicator;

/// Creates (on the lowest rank of `allRanks`) and imports (on the others) one multicast object of
/// `bufferSize` bytes for all of `allRanks`, exchanging it through `comm`. Refused in this build.
std::shared_ptr<NvlsConnection> connectNvlsCollective(std::shared_ptr<Communicator> comm, std::vector<int> allRanks,
                                                      size_t bufferSize);

}  // namespace mscclpp

#endif  // MSCCLPP_SWITCH_CHANNEL_HPP_

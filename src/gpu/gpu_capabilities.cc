// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <map>
#include <mscclpp/gpu_capabilities.hpp>
#include <mscclpp/gpu_utils.hpp>
#include <mscclpp/numa.hpp>
#include <mutex>

#include "common/checks.hpp"
#include "gpu/driver_api.hpp"

namespace mscclpp {
namespace {

#if !defined(__HIP_PLATFORM_AMD__)
bool driverAttribute(CUdevice device, CUdevice_attribute attribute) {
  int value = 0;
  return cu::cuDeviceGetAttribute(&value, attribute, device) == CUDA_SUCCESS && value != 0;
}
#endif

DeviceCapabilities probeDevice(int deviceId) {
  DeviceCapabilities dev;
  dev.deviceId = deviceId;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, deviceId) == cudaSuccess) {
    dev.name = prop.name;
    dev.computeCapabilityMajor = prop.major;
    dev.computeCapabilityMinor = prop.minor;
  }
  char busId[32] = {};
  if (cudaDeviceGetPCIBusId(busId, sizeof(busId), deviceId) == cudaSuccess) dev.pciBusId = busId;
  try {
    dev.numaNode = getDeviceNumaNode(deviceId);
  } catch (const BaseError& e) {
    LOG_INFO(GPU, "NUMA node of GPU ", deviceId, " unknown: ", e.what());
  }
#if !defined(__HIP_PLATFORM_AMD__)
  CUdevice device;
  if (cu::cuDeviceGet(&device, deviceId) == CUDA_SUCCESS) {
    dev.virtualMemoryManagement = driverAttribute(device, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
    dev.posixFdHandles = driverAttribute(device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    dev.fabricHandlesAdvertised = driverAttribute(device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED);
    dev.multicastAdvertised = driverAttribute(device, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED);
    if (dev.virtualMemoryManagement) {
      CUmemAllocationProp prop = {};
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = deviceId;
      requestedHandleTypes(prop) = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
      if (cu::cuMemGetAllocationGranularity(&dev.allocationGranularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
          CUDA_SUCCESS) {
        dev.allocationGranularity = 0;
      }
    }
  }
#endif
  return dev;
}

GpuCapabilities probe() {
  GpuCapabilities caps;
  cudaRuntimeGetVersion(&caps.runtimeVersion);
  if (cudaDriverGetVersion(&caps.driverVersion) != cudaSuccess) caps.driverVersion = 0;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    caps.unavailableReason = concat("no usable GPU: cudaGetDeviceCount returned ", cudaGetErrorName(err), " (",
                                    cudaGetErrorString(err), ")");
    cudaGetLastError();
    return caps;
  }
  if (count == 0) {
    caps.unavailableReason = "no usable GPU: the driver reports 0 devices";
    return caps;
  }
#if !defined(__HIP_PLATFORM_AMD__)
  if (!driverUnavailableReason().empty()) {
    caps.unavailableReason = "no usable GPU: " + driverUnavailableReason();
    return caps;
  }
#endif
  caps.deviceCount = count;
  for (int d = 0; d < count; ++d) caps.devices.push_back(probeDevice(d));
  LOG_INFO(GPU, "capabilities: ", caps.toString());
  return caps;
}

}  // namespace

std::string GpuCapabilities::toString() const {
  std::string out = concat("driver ", driverVersion, ", runtime ", runtimeVersion, ", ", deviceCount, " GPU(s)");
  if (!unavailableReason.empty()) out += ": " + unavailableReason;
  for (const DeviceCapabilities& d : devices) {
    out += concat("; GPU ", d.deviceId, " ", d.name, " sm_", d.computeCapabilityMajor, d.computeCapabilityMinor,
                  " bus ", d.pciBusId, " numa ", d.numaNode, " vmm ", d.virtualMemoryManagement, " posixfd ",
                  d.posixFdHandles, " fabric(advertised) ", d.fabricHandlesAdvertised, " multicast(advertised) ",
                  d.multicastAdvertised, " granularity ", d.allocationGranularity);
  }
  return out;
}

const GpuCapabilities& gpuCapabilities() {
  static const GpuCapabilities caps = probe();
  return caps;
}

bool fabricHandlesUsable(int deviceId) {
#if defined(__HIP_PLATFORM_AMD__)
  return false;
#else
  static std::mutex mutex;
  static std::map<int, bool> cache;
  const GpuCapabilities& caps = gpuCapabilities();
  if (deviceId < 0 || deviceId >= caps.deviceCount) return false;
  const DeviceCapabilities& dev = caps.devices[deviceId];
  if (!dev.fabricHandlesAdvertised || !dev.virtualMemoryManagement) return false;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(deviceId);
  if (it != cache.end()) return it->second;

  // The attribute only says the driver knows the type; an allocation needs an IMEX channel, so try one.
  CudaDeviceGuard deviceGuard(deviceId);
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = deviceId;
  requestedHandleTypes(prop) =
      static_cast<CUmemAllocationHandleType>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC);
  size_t gran = 0;
  bool usable = false;
  CUresult res = cu::cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (res == CUDA_SUCCESS) {
    CUmemGenericAllocationHandle handle;
    res = cu::cuMemCreate(&handle, gran, &prop, 0);
    if (res == CUDA_SUCCESS) {
      usable = true;
      cu::cuMemRelease(handle);
    }
  }
  if (usable) {
    LOG_INFO(GPU, "GPU ", deviceId, ": fabric handles usable");
  } else {
    LOG_INFO(GPU, "GPU ", deviceId,
             ": fabric handles advertised but an allocation with them failed: ", cuResultName(res),
             "; fabric export disabled (an IMEX channel under /dev/nvidia-caps-imex-channels is "
             "needed)");
  }
  cache[deviceId] = usable;
  return usable;
#endif
}

}  // namespace mscclpp

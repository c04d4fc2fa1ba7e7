// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/semaphore.hpp>
#include <type_traits>

namespace compat {

static_assert(std::is_same_v<mscclpp::Host2DeviceSemaphore::DeviceHandle, mscclpp::Host2DeviceSemaphoreDeviceHandle>);
static_assert(std::is_same_v<mscclpp::MemoryDevice2DeviceSemaphore::DeviceHandle,
                             mscclpp::MemoryDevice2DeviceSemaphoreDeviceHandle>);

// Semaphore's state is protected: a derived class reaches it.
class DerivedSemaphore : public mscclpp::Semaphore {
 public:
  bool hasState() const { return pimpl_ != nullptr; }
};

void useSemaphores(mscclpp::Communicator& comm, const mscclpp::Connection& conn, const mscclpp::Semaphore& sem) {
  mscclpp::Host2DeviceSemaphore h2d(sem);
  mscclpp::Host2DeviceSemaphore h2dBuilt(comm, conn);
  h2d.signal();
  (void)h2d.connection();
  (void)h2d.deviceHandle();
  (void)h2dBuilt.deviceHandle();
  mscclpp::Host2HostSemaphore h2h(comm, conn);
  h2h.signal();
  if (!h2h.poll()) h2h.wait();
  h2h.wait(100);
  mscclpp::MemoryDevice2DeviceSemaphore d2d(sem);
  (void)d2d.deviceHandle();
  (void)d2d.connection();
  DerivedSemaphore derived;
  (void)derived.hasState();
  // Through gpu_utils.hpp.
  MSCCLPP_CUDATHROW(cudaGetLastError());
  mscclpp::GpuBuffer<uint64_t> buffer(1);
  std::shared_ptr<uint64_t> host = mscclpp::detail::gpuCallocHostShared<uint64_t>();
  (void)buffer.data();
}

}  // namespace compat

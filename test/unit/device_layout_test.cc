// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The device handles as a host compiler sees them. Their sizes and field offsets are ABI: the host
// builds them and copies them byte for byte into kernels (and Python passes them as raw bytes), so a
// host build and a device build must agree on every offset checked here.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mscclpp/atomic_device.hpp>
#include <mscclpp/concurrency_device.hpp>
#include <mscclpp/copy_device.hpp>
#include <mscclpp/fifo_device.hpp>
#include <mscclpp/gpu_data_types.hpp>
#include <mscclpp/memory_channel_device.hpp>
#include <mscclpp/packet_device.hpp>
#include <mscclpp/port_channel_device.hpp>
#include <mscclpp/semaphore_device.hpp>
#include <mscclpp/switch_channel_device.hpp>
#include <thread>
#include <type_traits>
#include <vector>

using namespace mscclpp;

namespace {

#if !defined(MSCCLPP_HOST_COMPILE)
#error "this test checks the host compiler's view of the device headers; compile it as plain C++"
#endif

// offsetof is only specified for standard-layout types, and a handle that derives from another is not
// one; this measures the offset on an object instead.
template <typename S, typename M>
size_t memberOffset(M S::*member) {
  static S object{};
  return static_cast<size_t>(reinterpret_cast<const char*>(&(object.*member)) - reinterpret_cast<const char*>(&object));
}

template <typename T>
constexpr bool isRawBytesHandle = std::is_trivially_copyable_v<T>&& std::is_trivially_destructible_v<T>;

static_assert(sizeof(ProxyTrigger) == 32 && alignof(ProxyTrigger) == 16, "ProxyTrigger is the FIFO slot: 32 bytes");
static_assert(offsetof(ProxyTrigger, fst) == 0 && offsetof(ProxyTrigger, snd) == 8, "fst then snd");
static_assert(isRawBytesHandle<ProxyTrigger>, "triggers are copied as bytes");

static_assert(sizeof(FifoDeviceHandle) == 40, "FifoDeviceHandle layout");
static_assert(offsetof(FifoDeviceHandle, triggers) == 0, "FifoDeviceHandle::triggers");
static_assert(offsetof(FifoDeviceHandle, head) == 8, "FifoDeviceHandle::head");
static_assert(offsetof(FifoDeviceHandle, tail) == 16, "FifoDeviceHandle::tail");
static_assert(offsetof(FifoDeviceHandle, tailCache) == 24, "FifoDeviceHandle::tailCache");
static_assert(offsetof(FifoDeviceHandle, size) == 32, "FifoDeviceHandle::size");
static_assert(isRawBytesHandle<FifoDeviceHandle>, "FifoDeviceHandle is passed as bytes");

static_assert(sizeof(Host2DeviceSemaphoreDeviceHandle) == 16, "Host2DeviceSemaphoreDeviceHandle layout");
static_assert(offsetof(Host2DeviceSemaphoreDeviceHandle, inboundToken) == 0, "inboundToken");
static_assert(offsetof(Host2DeviceSemaphoreDeviceHandle, expectedInboundToken) == 8, "expectedInboundToken");
static_assert(isRawBytesHandle<Host2DeviceSemaphoreDeviceHandle>, "passed as bytes");

static_assert(sizeof(MemoryDevice2DeviceSemaphoreDeviceHandle) == 32, "MemoryDevice2DeviceSemaphoreDeviceHandle");
static_assert(offsetof(MemoryDevice2DeviceSemaphoreDeviceHandle, inboundToken) == 0, "inboundToken");
static_assert(offsetof(MemoryDevice2DeviceSemaphoreDeviceHandle, outboundToken) == 8, "outboundToken");
static_assert(offsetof(MemoryDevice2DeviceSemaphoreDeviceHandle, remoteInboundToken) == 16, "remoteInboundToken");
static_assert(offsetof(MemoryDevice2DeviceSemaphoreDeviceHandle, expectedInboundToken) == 24, "expectedInbound");
static_assert(isRawBytesHandle<MemoryDevice2DeviceSemaphoreDeviceHandle>, "passed as bytes");

static_assert(sizeof(BasePortChannelDeviceHandle) == 64, "BasePortChannelDeviceHandle layout");
static_assert(offsetof(BasePortChannelDeviceHandle, semaphoreId_) == 0, "semaphoreId_");
static_assert(offsetof(BasePortChannelDeviceHandle, semaphore_) == 8, "semaphore_");
static_assert(offsetof(BasePortChannelDeviceHandle, fifo_) == 24, "fifo_");
static_assert(sizeof(PortChannelDeviceHandle) == 72, "PortChannelDeviceHandle layout");
static_assert(isRawBytesHandle<BasePortChannelDeviceHandle> && isRawBytesHandle<PortChannelDeviceHandle>,
              "port channel handles are passed as bytes");
static_assert(std::is_same_v<SemaphoreId, uint32_t> && std::is_same_v<MemoryId, uint32_t>, "ids are 32-bit");

static_assert(sizeof(BaseMemoryChannelDeviceHandle) == 32, "BaseMemoryChannelDeviceHandle layout");
static_assert(offsetof(BaseMemoryChannelDeviceHandle, semaphore_) == 0, "semaphore_");
static_assert(sizeof(MemoryChannelDeviceHandle) == 56, "MemoryChannelDeviceHandle layout");
static_assert(isRawBytesHandle<BaseMemoryChannelDeviceHandle> && isRawBytesHandle<MemoryChannelDeviceHandle>,
              "memory channel handles are passed as bytes");

static_assert(sizeof(SwitchChannelDeviceHandle) == 24, "SwitchChannelDeviceHandle layout");
static_assert(offsetof(SwitchChannelDeviceHandle, devicePtr) == 0, "devicePtr");
static_assert(offsetof(SwitchChannelDeviceHandle, mcPtr) == 8, "mcPtr");
static_assert(offsetof(SwitchChannelDeviceHandle, bufferSize) == 16, "bufferSize");
static_assert(isRawBytesHandle<SwitchChannelDeviceHandle>, "passed as bytes");

static_assert(sizeof(LL16Packet) == 16 && alignof(LL16Packet) == 16, "LL16Packet is 16 bytes, 16-aligned");
static_assert(offsetof(LL16Packet, data1) == 0 && offsetof(LL16Packet, flag1) == 4, "LL16Packet first half");
static_assert(offsetof(LL16Packet, data2) == 8 && offsetof(LL16Packet, flag2) == 12, "LL16Packet second half");
static_assert(sizeof(LL8Packet) == 8 && alignof(LL8Packet) == 8, "LL8Packet is 8 bytes, 8-aligned");
static_assert(offsetof(LL8Packet, data) == 0 && offsetof(LL8Packet, flag) == 4 && offsetof(LL8Packet, raw_) == 0,
              "LL8Packet: data in the low word, flag in the high word");
static_assert(std::is_same_v<LLPacket, LL16Packet>, "LLPacket is LL16Packet");
static_assert(std::is_same_v<LL16Packet::Payload, uint2> && std::is_same_v<LL8Packet::Payload, uint32_t>,
              "packet payloads");
static_assert(isRawBytesHandle<LL16Packet> && isRawBytesHandle<LL8Packet>, "packets are plain bytes");

static_assert(sizeof(DeviceSyncer) == 16 && DeviceSyncer::NumCounters == 3, "DeviceSyncer is 16 bytes");
static_assert(std::is_trivially_default_constructible_v<DeviceSyncer>, "DeviceSyncer lives in zeroed memory");
static_assert(sizeof(DeviceSemaphore) == 4, "DeviceSemaphore is one int");

static_assert(sizeof(f16x8) == 16 && alignof(f16x8) == 16, "f16x8");
static_assert(sizeof(bf16x2) == 4 && alignof(bf16x2) == 4, "bf16x2");
static_assert(sizeof(f64x1) == 8 && sizeof(i32x4) == 16 && sizeof(u32x2) == 8, "vector sizes");
#if defined(__FP8_TYPES_EXIST__)
static_assert(sizeof(fp8_e4m3x2) == 2 && sizeof(fp8_e5m2x8) == 8, "fp8 vectors are packed");
#endif
static_assert(f32x4::Size == 4 && std::is_same_v<f32x4::ElementType, float>, "VectorType metadata");

static_assert(TriggerData == 1 && TriggerFlag == 2 && TriggerSync == 4, "trigger type bits");

}  // namespace

TEST(DeviceLayoutTest, DerivedHandlesPlaceTheirFieldsAfterTheBase) {
  EXPECT_EQ(memberOffset(&PortChannelDeviceHandle::dst_), 64u);
  EXPECT_EQ(memberOffset(&PortChannelDeviceHandle::src_), 68u);
  EXPECT_EQ(memberOffset(&MemoryChannelDeviceHandle::dst_), 32u);
  EXPECT_EQ(memberOffset(&MemoryChannelDeviceHandle::src_), 40u);
  EXPECT_EQ(memberOffset(&MemoryChannelDeviceHandle::packetBuffer_), 48u);
}

TEST(DeviceLayoutTest, HostDeviceConstructorsFillEveryField) {
  uint64_t words[8] = {};
  Host2DeviceSemaphoreDeviceHandle h2d{&words[0], &words[1]};
  FifoDeviceHandle fifo{nullptr, &words[2], &words[3], &words[4], 512};
  PortChannelDeviceHandle port(7, h2d, fifo, 11, 13);
  EXPECT_EQ(port.semaphoreId_, 7u);
  EXPECT_EQ(port.semaphore_.inboundToken, &words[0]);
  EXPECT_EQ(port.fifo_.tailCache, &words[4]);
  EXPECT_EQ(port.fifo_.size, 512);
  EXPECT_EQ(port.dst_, 11u);
  EXPECT_EQ(port.src_, 13u);

  MemoryDevice2DeviceSemaphoreDeviceHandle d2d{&words[4], &words[5], &words[6], &words[7]};
  MemoryChannelDeviceHandle mem(d2d, &words[0], &words[1], &words[2]);
  EXPECT_EQ(mem.semaphore_.remoteInboundToken, &words[6]);
  EXPECT_EQ(mem.dst_, &words[0]);
  EXPECT_EQ(mem.src_, &words[1]);
  EXPECT_EQ(mem.packetBuffer_, &words[2]);
}

TEST(DeviceLayoutTest, ProxyTriggerFieldsDecodeHandMadeWords) {
  ProxyTrigger t;
  t.fst = (uint64_t{0x89abcdef} << 32) | 0x01234567u;
  t.snd = uint64_t{0x76543210} | (uint64_t{0x1a5} << 32) | (uint64_t{0x0f3} << 41) | (uint64_t{0x5} << 50) |
          (uint64_t{0x2c7} << 53) | detail::TriggerValidBitMask;
  EXPECT_EQ(t.fields.size, 0x01234567u);
  EXPECT_EQ(t.fields.srcOffset, 0x89abcdefu);
  EXPECT_EQ(t.fields.dstOffset, 0x76543210u);
  EXPECT_EQ(t.fields.srcMemoryId, 0x1a5u);
  EXPECT_EQ(t.fields.dstMemoryId, 0x0f3u);
  EXPECT_EQ(t.fields.type, 0x5u);
  EXPECT_EQ(t.fields.semaphoreId, 0x2c7u);
}

TEST(DeviceLayoutTest, ProxyTriggerFieldsEncodeIntoTheDocumentedBits) {
  ProxyTrigger t;
  t.fst = 0;
  t.snd = 0;
  t.fields.reserved = 0;
  t.fields.size = 0xffffffffu;
  EXPECT_EQ(t.fst, 0x00000000ffffffffull);
  t.fields.srcOffset = 1;
  EXPECT_EQ(t.fst, 0x00000001ffffffffull);
  t.fields.dstOffset = 0xfffffffeu;
  EXPECT_EQ(t.snd, 0x00000000fffffffeull);
  t.fields.srcMemoryId = (1u << TriggerBitsMemoryId) - 1;
  EXPECT_EQ(t.snd >> 32, 0x1ffull);
  t.fields.dstMemoryId = 1;
  EXPECT_EQ(t.snd >> 41, 0x1ull);
  t.fields.dstMemoryId = 0;
  t.fields.srcMemoryId = 0;
  t.fields.type = TriggerData | TriggerFlag | TriggerSync;
  EXPECT_EQ(t.snd >> 50, 0x7ull);
  t.fields.type = 0;
  t.fields.semaphoreId = (1u << TriggerBitsSemaphoreId) - 1;
  EXPECT_EQ(t.snd >> 53, 0x3ffull) << "semaphoreId fills bits 53..62";
  EXPECT_EQ(t.snd & detail::TriggerValidBitMask, 0u) << "no field reaches the valid bit";

  // The reserved bit lives past snd, in the third word that makes the slot 32 bytes.
  uint64_t before[4];
  std::memcpy(before, &t, sizeof(before));
  t.fields.reserved = 1;
  uint64_t after[4];
  std::memcpy(after, &t, sizeof(after));
  EXPECT_EQ(after[0], before[0]);
  EXPECT_EQ(after[1], before[1]);
  EXPECT_NE(after[2], before[2]);
}

TEST(DeviceLayoutTest, PacketFieldsOverlayTheRawWords) {
  LL8Packet p8;
  p8.raw_ = (uint64_t{0xfeedbeef} << 32) | 0x12345678u;
  EXPECT_EQ(p8.data, 0x12345678u);
  EXPECT_EQ(p8.flag, 0xfeedbeefu);

  LL16Packet p16;
  uint32_t words[4] = {1, 2, 3, 4};
  std::memcpy(&p16, words, sizeof(words));
  EXPECT_EQ(p16.data1, 1u);
  EXPECT_EQ(p16.flag1, 2u);
  EXPECT_EQ(p16.data2, 3u);
  EXPECT_EQ(p16.flag2, 4u);
}

TEST(DeviceLayoutTest, DataTypeEnumeratorsKeepTheirValues) {
  EXPECT_EQ(static_cast<int>(DataType::INT32), 0);
  EXPECT_EQ(static_cast<int>(DataType::UINT32), 1);
  EXPECT_EQ(static_cast<int>(DataType::FLOAT16), 2);
  EXPECT_EQ(static_cast<int>(DataType::FLOAT32), 3);
  EXPECT_EQ(static_cast<int>(DataType::BFLOAT16), 4);
  EXPECT_EQ(static_cast<int>(DataType::FP8_E4M3), 5);
  EXPECT_EQ(static_cast<int>(DataType::FP8_E5M2), 6);
}

TEST(DeviceLayoutTest, VectorTypeWordsAliasTheElements) {
  u32x4 v;
  for (int i = 0; i < 4; ++i) v[i] = 0x11111111u * static_cast<uint32_t>(i + 1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v.words[i], v.data[i]);
  f16x2 h;
  h.words[0] = 0x3c003c00u;  // two halves of 1.0
  EXPECT_EQ(__half2float(h[0]), 1.0f);
  EXPECT_EQ(__half2float(h[1]), 1.0f);
}

TEST(DeviceLayoutTest, HostAtomicsCountEveryIncrementFromManyThreads) {
  uint64_t counter = 0;
  constexpr int kThreads = 4;
  constexpr uint64_t kAdds = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counter] {
      for (uint64_t i = 0; i < kAdds; ++i) atomicFetchAdd<uint64_t, scopeDevice>(&counter, 1, memoryOrderRelaxed);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(atomicLoad(&counter, memoryOrderAcquire), kThreads * kAdds);
  atomicStore(&counter, uint64_t{42}, memoryOrderRelease);
  EXPECT_EQ(atomicFetchAdd(&counter, uint64_t{8}, memoryOrderAcqRel), 42u) << "returns the value before the add";
  EXPECT_EQ(atomicLoad(&counter, memoryOrderSeqCst), 50u);
}

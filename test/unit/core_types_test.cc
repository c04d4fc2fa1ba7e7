// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <gtest/gtest.h>

#include <mscclpp/core.hpp>
#include <sstream>

using namespace mscclpp;

TEST(CoreTypesTest, VersionMatchesTheHeader) {
  EXPECT_EQ(version(), "0.8.0");
  EXPECT_EQ(MSCCLPP_VERSION, 800);
}

TEST(CoreTypesTest, TransportFlagsSetAlgebra) {
  TransportFlags ipcEth = Transport::CudaIpc | Transport::Ethernet;
  EXPECT_TRUE(ipcEth.has(Transport::CudaIpc));
  EXPECT_TRUE(ipcEth.has(Transport::Ethernet));
  EXPECT_FALSE(ipcEth.has(Transport::IB0));
  EXPECT_EQ(ipcEth.count(), 2u);
  EXPECT_EQ((ipcEth & Transport::Ethernet), TransportFlags(Transport::Ethernet));
  EXPECT_EQ((ipcEth ^ Transport::Ethernet), TransportFlags(Transport::CudaIpc));
  EXPECT_TRUE(NoTransports.none());
  EXPECT_EQ(AllIBTransports.count(), 8u);
  EXPECT_TRUE(AllTransports.has(Transport::Ethernet));
  EXPECT_FALSE(AllTransports.has(Transport::Unknown));
  EXPECT_EQ(~NoTransports, ~TransportFlags());
  TransportFlags f;
  f |= Transport::IB3;
  EXPECT_TRUE(f.has(Transport::IB3));
  f &= Transport::IB4;
  EXPECT_TRUE(f.none());
  EXPECT_EQ(sizeof(TransportFlags), 8u);
}

TEST(CoreTypesTest, TransportFlagsRefuseAValueThatNamesNoTransport) {
  for (int value : {static_cast<int>(Transport::NumTransports), 63, 64, 1000, -1}) {
    try {
      TransportFlags flags{static_cast<Transport>(value)};
      ADD_FAILURE() << "TransportFlags(Transport(" << value << ")) was accepted as " << flags.count() << " bits";
    } catch (const Error& e) {
      EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
      EXPECT_NE(std::string(e.what()).find(std::to_string(value) + " is not a transport"), std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(AllTransports.has(static_cast<Transport>(value)));
  }
}

TEST(CoreTypesTest, TransportsPrintShortNames) {
  std::ostringstream os;
  os << Transport::Unknown << " " << Transport::CudaIpc << " " << Transport::IB0 << " " << Transport::IB7 << " "
     << Transport::Ethernet << " " << Transport::NumTransports;
  EXPECT_EQ(os.str(), "UNK IPC IB0 IB7 ETH NUM");
}

TEST(CoreTypesTest, DevicePrintsTypeAndId) {
  std::ostringstream os;
  os << Device(DeviceType::GPU, 3) << " " << DeviceType::CPU;
  EXPECT_EQ(os.str(), "Device(type=GPU, id=3) CPU");
}

TEST(CoreTypesTest, EndpointConfigLayoutAndImplicitConversions) {
  EXPECT_EQ(sizeof(EndpointConfig), 44u);
  EXPECT_EQ(sizeof(EndpointConfig::Ib), 28u);
  EXPECT_EQ(sizeof(Device), 8u);
  EndpointConfig a = Transport::CudaIpc;
  EXPECT_EQ(a.transport, Transport::CudaIpc);
  EXPECT_EQ(a.device.type, DeviceType::GPU);
  EXPECT_EQ(a.maxWriteQueueSize, -1);
  EXPECT_EQ(a.ib.maxCqSize, EndpointConfig::Ib::DefaultMaxCqSize);
  EndpointConfig b = {Transport::Ethernet, DeviceType::CPU};
  EXPECT_EQ(b.device.type, DeviceType::CPU);
  EXPECT_EQ(b.device.id, -1);
}

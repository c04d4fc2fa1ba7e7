// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Multicast objects are never created here: every test checks a refusal.

#include <gtest/gtest.h>

#include <mscclpp/core.hpp>
#include <mscclpp/switch_channel.hpp>
#include <string>

#include "gpu/nvls_gate.hpp"

using namespace mscclpp;

namespace {

template <typename F>
void expectNvlsRefusal(F&& call) {
  try {
    call();
    FAIL() << "the call was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage);
    EXPECT_EQ(std::string(e.what()).rfind("NVLS is not supported", 0), 0u) << e.what();
  }
}

}  // namespace

TEST(SwitchChannelTest, CreatingAMulticastObjectIsRefused) {
  expectNvlsRefusal([] { NvlsConnection connection(1 << 21, 2); });
}

TEST(SwitchChannelTest, ImportingAMulticastObjectIsRefused) {
  expectNvlsRefusal([] { NvlsConnection connection(std::vector<char>(64, 0)); });
}

TEST(SwitchChannelTest, ConnectNvlsCollectiveIsRefused) {
  expectNvlsRefusal([] { connectNvlsCollective(nullptr, {0, 1}, 1 << 21); });
}

TEST(SwitchChannelTest, RefusalNamesWhatIsMissing) {
  EXPECT_NE(nvlsRefusalReason(false, true).find("does not advertise multicast"), std::string::npos);
  EXPECT_NE(nvlsRefusalReason(true, false).find("MSCCLPP_ENABLE_NVLS=1"), std::string::npos);
  EXPECT_NE(nvlsRefusalReason(true, true).find("no multicast implementation"), std::string::npos);
}

TEST(SwitchChannelTest, IsNvlsSupportedAgreesWithTheRefusal) { EXPECT_FALSE(isNvlsSupported()); }

TEST(SwitchChannelTest, ChannelOfGivenPointersCarriesThemToTheDevice) {
  char local[64];
  auto multicast = std::make_shared<char>('x');
  SwitchChannel channel(local, multicast, sizeof(local));
  SwitchChannel::DeviceHandle handle = channel.deviceHandle();
  EXPECT_EQ(handle.devicePtr, static_cast<void*>(local));
  EXPECT_EQ(handle.mcPtr, static_cast<void*>(multicast.get()));
  EXPECT_EQ(handle.bufferSize, sizeof(local));
  EXPECT_EQ(channel.getDevicePtr(), static_cast<void*>(local));
}

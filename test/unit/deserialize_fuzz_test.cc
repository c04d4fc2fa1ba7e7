// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Every deserializer reached by bytes from a peer, fed truncated, extended, mutated and random input:
// the only acceptable outcomes are a valid object or Error(InvalidUsage). Runs under ASan/UBSan in CI.

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <mscclpp/core.hpp>
#include <random>

using namespace mscclpp;

namespace {

using Deserializer = std::function<void(const std::vector<char>&)>;

/// Runs `deserialize` on `input`; fails the test on anything but success or Error(InvalidUsage).
/// Returns whether it was accepted.
bool acceptedOrInvalidUsage(const Deserializer& deserialize, const std::vector<char>& input) {
  try {
    deserialize(input);
    return true;
  } catch (const Error& e) {
    EXPECT_EQ(e.getErrorCode(), ErrorCode::InvalidUsage) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
  }
  return false;
}

void fuzz(const Deserializer& deserialize, const std::vector<char>& valid) {
  ASSERT_TRUE(acceptedOrInvalidUsage(deserialize, valid)) << "the valid input must be accepted";
  // Every truncation is rejected.
  for (size_t n = 0; n < valid.size(); ++n) {
    std::vector<char> cut(valid.begin(), valid.begin() + n);
    EXPECT_FALSE(acceptedOrInvalidUsage(deserialize, cut)) << "truncated to " << n << " bytes";
  }
  // Trailing bytes are rejected.
  for (size_t extra : {1, 7, 4096}) {
    std::vector<char> longer = valid;
    longer.resize(valid.size() + extra, 'z');
    EXPECT_FALSE(acceptedOrInvalidUsage(deserialize, longer)) << extra << " trailing bytes";
  }
  std::mt19937 rng(42);
  // Mutations of the valid input: one to four bytes changed.
  for (int i = 0; i < 3000; ++i) {
    std::vector<char> mutated = valid;
    int changes = 1 + rng() % 4;
    for (int c = 0; c < changes; ++c) mutated[rng() % mutated.size()] = static_cast<char>(rng());
    acceptedOrInvalidUsage(deserialize, mutated);
  }
  // Random input of random length.
  for (int i = 0; i < 3000; ++i) {
    std::vector<char> random(rng() % (2 * valid.size() + 1));
    for (char& b : random) b = static_cast<char>(rng());
    acceptedOrInvalidUsage(deserialize, random);
  }
}

const EndpointConfig kHostEthernet{Transport::Ethernet, DeviceType::CPU};

}  // namespace

TEST(DeserializeFuzzTest, Endpoint) {
  auto context = Context::create();
  Endpoint endpoint = context->createEndpoint(kHostEthernet);
  fuzz([](const std::vector<char>& b) { Endpoint::deserialize(b); }, endpoint.serialize());
}

TEST(DeserializeFuzzTest, RegisteredMemory) {
  auto context = Context::create();
  std::vector<char> buffer(4096);
  RegisteredMemory memory = context->registerMemory(buffer.data(), buffer.size(), Transport::Ethernet);
  fuzz([](const std::vector<char>& b) { RegisteredMemory::deserialize(b); }, memory.serialize());
}

TEST(DeserializeFuzzTest, SemaphoreStub) {
  auto context = Context::create();
  Endpoint endpoint = context->createEndpoint(kHostEthernet);
  Connection connection = context->connect(endpoint, endpoint);
  SemaphoreStub stub(connection);
  fuzz([](const std::vector<char>& b) { SemaphoreStub::deserialize(b); }, stub.serialize());
}

TEST(DeserializeFuzzTest, HugeClaimedLengthsAreRejectedWithoutAllocating) {
  // A SemaphoreStub starts with the length of its memory description: claim 2^62 bytes.
  std::vector<char> bytes(8, 0);
  uint64_t huge = 1ULL << 62;
  std::memcpy(bytes.data(), &huge, sizeof(huge));
  EXPECT_FALSE(acceptedOrInvalidUsage([](const std::vector<char>& b) { SemaphoreStub::deserialize(b); }, bytes));
}

TEST(DeserializeFuzzTest, RoundTripsPreserveTheFields) {
  auto context = Context::create();
  std::vector<char> buffer(4096);
  RegisteredMemory memory = context->registerMemory(buffer.data() + 16, 100, Transport::Ethernet);
  RegisteredMemory copy = RegisteredMemory::deserialize(memory.serialize());
  EXPECT_EQ(copy.originalDataPtr(), buffer.data() + 16);
  EXPECT_EQ(copy.size(), 100u);
  EXPECT_EQ(copy.transports(), TransportFlags(Transport::Ethernet));
  Endpoint endpoint = context->createEndpoint(kHostEthernet);
  Endpoint endpointCopy = Endpoint::deserialize(endpoint.serialize());
  EXPECT_EQ(endpointCopy.transport(), Transport::Ethernet);
  EXPECT_EQ(endpointCopy.device().type, DeviceType::CPU);
  EXPECT_EQ(endpointCopy.hostHash(), endpoint.hostHash());
  EXPECT_EQ(endpointCopy.pidHash(), endpoint.pidHash());
  EXPECT_EQ(endpointCopy.serialize(), endpoint.serialize());
}

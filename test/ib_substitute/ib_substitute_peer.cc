// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The far side of the IB fault tests that stop or kill their peer: a separate process, started by
// ib_substitute_test.cc with pipes on stdin/stdout. It creates an IB1 host endpoint and a registered
// buffer of argv[1] bytes, writes both (serialized, each as u64 length + bytes) to stdout, reads the
// parent's endpoint the same way from stdin, connects, writes one byte 'R', and then waits until its
// stdin closes (or it is stopped or killed by the test).

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mscclpp/core.hpp>
#include <vector>

namespace {

bool writeAll(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(STDOUT_FILENO, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(STDIN_FILENO, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool writeBlob(const std::vector<char>& blob) {
  uint64_t size = blob.size();
  return writeAll(&size, sizeof(size)) && writeAll(blob.data(), blob.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <buffer bytes>\n", argv[0]);
    return 2;
  }
  const size_t bytes = std::strtoull(argv[1], nullptr, 10);
  try {
    auto context = mscclpp::Context::create();
    mscclpp::Endpoint local = context->createEndpoint({mscclpp::Transport::IB1, mscclpp::DeviceType::CPU});
    std::vector<char> buffer(bytes, 0);
    mscclpp::RegisteredMemory memory = context->registerMemory(buffer.data(), bytes, mscclpp::Transport::IB1);
    if (!writeBlob(local.serialize()) || !writeBlob(memory.serialize())) return 3;
    uint64_t size = 0;
    if (!readAll(&size, sizeof(size)) || size > (1 << 20)) return 3;
    std::vector<char> remote(size);
    if (!readAll(remote.data(), size)) return 3;
    mscclpp::Connection connection = context->connect(local, mscclpp::Endpoint::deserialize(remote));
    if (!writeAll("R", 1)) return 3;
    char byte;
    while (::read(STDIN_FILENO, &byte, 1) > 0) {
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ib_substitute_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}

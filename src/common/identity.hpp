// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Who we are: the host and the process, as hashes that peers compare to decide whether memory can be
// shared directly (same process), through IPC (same host) or only over the network.

#ifndef MSCCLPP_COMMON_IDENTITY_HPP_
#define MSCCLPP_COMMON_IDENTITY_HPP_

#include <cstdint>
#include <string>

namespace mscclpp {

/// The host's identity: MSCCLPP_HOSTID if set, else host name + kernel boot id. Two processes in
/// containers of one machine share the boot id, and so share the host identity.
const std::string& hostIdentity();

/// The process's identity: pid and PID namespace, so equal pids in different namespaces differ.
const std::string& processIdentity();

/// 64-bit hashes of the two identities above (computed once).
uint64_t getHostHash();
uint64_t getPidHash();

/// 64 bits from the kernel's random source (getrandom), never 0: secrets and names that another
/// process must not be able to guess. Throws SysError if the source fails.
uint64_t randomU64();

/// DJB2a of a string.
uint64_t hashString(const std::string& text);

}  // namespace mscclpp

#endif  // MSCCLPP_COMMON_IDENTITY_HPP_

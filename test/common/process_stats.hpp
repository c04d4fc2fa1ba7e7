// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_PROCESS_STATS_HPP_
#define MSCCLPP_TEST_PROCESS_STATS_HPP_

#include <dirent.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

namespace mscclpp::test {

/// Number of entries in a /proc directory of this process (open fds, threads).
inline int countProcEntries(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - (std::string(dir) == "/proc/self/fd" ? 1 : 0);  // the directory stream's own fd
}

inline int openFdCount() { return countProcEntries("/proc/self/fd"); }

/// The ids of this process's threads.
inline std::set<int> threadIds() {
  std::set<int> ids;
  DIR* d = opendir("/proc/self/task");
  if (!d) return ids;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ids.insert(std::atoi(e->d_name));
  }
  closedir(d);
  return ids;
}

/// The threads that exist now but not in `before`, as listed at this moment.
inline std::set<int> threadsAddedSince(const std::set<int>& before) {
  std::set<int> added;
  for (int id : threadIds()) {
    if (!before.count(id)) added.insert(id);
  }
  return added;
}

/// The threads that exist now but not in `before`, once exited ones are gone. A joined thread stays
/// listed in /proc for a moment after join() returns (it wakes the joiner before the kernel releases
/// it), longer on a loaded machine; so counts taken right after a join are not comparable, while a
/// set of ids is: a thread of `before` that leaves later changes nothing, and a new one must go.
/// Waits at most 10 s for the new ones to leave.
inline std::set<int> newThreads(const std::set<int>& before) {
  std::set<int> added = threadsAddedSince(before);
  for (int i = 0; i < 1000 && !added.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    added = threadsAddedSince(before);
  }
  return added;
}

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_PROCESS_STATS_HPP_

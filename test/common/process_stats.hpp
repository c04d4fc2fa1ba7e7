// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#ifndef MSCCLPP_TEST_PROCESS_STATS_HPP_
#define MSCCLPP_TEST_PROCESS_STATS_HPP_

#include <dirent.h>

#include <chrono>
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
inline int threadCount() { return countProcEntries("/proc/self/task"); }

/// Waits up to 2 s for exiting threads to disappear from /proc before comparing counts. A joined
/// thread can still be listed: join returns once the kernel clears the thread's tid, which happens
/// before the kernel removes the task from /proc/self/task. Comparing at once is a race that a
/// loaded machine loses.
inline int settledThreadCount(int expected) {
  for (int i = 0; i < 200 && threadCount() > expected; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return threadCount();
}

}  // namespace mscclpp::test

#endif  // MSCCLPP_TEST_PROCESS_STATS_HPP_

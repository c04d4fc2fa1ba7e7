// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// Reading a plan file: what is at the path is checked before it is read, so that a directory, a FIFO,
// a missing or unreadable file each get their own message, and nothing blocks on a FIFO.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/checks.hpp"
#include "common/unique_fd.hpp"
#include "ext/executor/plan.hpp"
#include "ext/executor/plan_error.hpp"

namespace mscclpp {

using namespace executor;

namespace {

// Far more than any plan; a bigger file is refused before it is read into memory.
constexpr uint64_t kMaxPlanFileBytes = 1ull << 30;

/// What is at the path, for a message, when it is not a regular file.
const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

/// Opens whatever is at the path: O_NONBLOCK so that a FIFO opens at once (and is
/// then refused) instead of waiting for a writer.
UniqueFd openPlanFile(const Where& w) {
  UniqueFd fd(::open(w.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd) return fd;
  const int err = errno;
  if (err == ENOENT) w.fail("the file does not exist");
  if (err == EACCES) w.fail("the file is not readable (permission denied)");
  if (err == ENOTDIR) w.fail("a component of the path is not a directory");
  w.fail(concat("the file cannot be opened: ", errnoName(err)));
}

}  // namespace

std::string ExecutionPlan::Impl::readFile(const std::string& path, int rank) {
  const Where w{path, rank, ""};
  UniqueFd fd = openPlanFile(w);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) w.fail(concat("the file cannot be examined: ", errnoName(errno)));
  if (!S_ISREG(st.st_mode)) w.fail(concat("the path is ", fileKind(st.st_mode), ", not a plan file"));
  if (static_cast<uint64_t>(st.st_size) > kMaxPlanFileBytes) {
    w.fail(concat("the file has ", st.st_size, " bytes, more than the 1 GiB a plan may have"));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) w.fail(concat("reading the file failed: ", errnoName(errno)));
    if (n == 0) break;  // the file shrank while being read: parse what is there
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace mscclpp

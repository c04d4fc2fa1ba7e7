// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The one logger. A message is written when its level is at least the configured level and its
// subsystem is in the configured mask. Configuration comes from the environment once per process:
//   MSCCLPP_LOG_LEVEL   DEBUG | INFO | WARN | ERROR | NONE            (default ERROR)
//   MSCCLPP_LOG_SUBSYS  comma list of ENV GPU NET CONN MEM PROXY EXEC NCCL, or ALL; a leading ^
//                       keeps every subsystem except those listed      (default ALL)
//   MSCCLPP_LOG_FILE    a path; %h becomes the host name, %p the pid   (default stderr)
// The older MSCCLPP_DEBUG (VERSION WARN INFO ABORT TRACE), MSCCLPP_DEBUG_SUBSYS and MSCCLPP_DEBUG_FILE
// are accepted where the MSCCLPP_LOG_* variable is unset.
// Layers log under their subsystem: NET = bootstrap and sockets, CONN = transports and connections,
// MEM = IPC handles, imports and the token pool, PROXY = fifo, proxy and proxy service, GPU = the GPU
// layer, ENV = configuration.

#ifndef MSCCLPP_COMMON_LOGGER_HPP_
#define MSCCLPP_COMMON_LOGGER_HPP_

#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/strings.hpp"

namespace mscclpp {

class Env;

enum class LogLevel : int { Debug = 0, Info = 1, Warn = 2, Error = 3, None = 4 };

#define MSCCLPP_FOR_EACH_LOG_SUBSYS(X) X(ENV) X(GPU) X(NET) X(CONN) X(MEM) X(PROXY) X(EXEC) X(NCCL)

enum class LogSubsys : unsigned {
#define MSCCLPP_LOG_SUBSYS_BIT(name) name,
  MSCCLPP_FOR_EACH_LOG_SUBSYS(MSCCLPP_LOG_SUBSYS_BIT)
#undef MSCCLPP_LOG_SUBSYS_BIT
      Count
};

using LogSubsysMask = unsigned;
constexpr LogSubsysMask kAllLogSubsys = (1u << static_cast<unsigned>(LogSubsys::Count)) - 1;

constexpr LogSubsysMask logSubsysBit(LogSubsys subsys) { return 1u << static_cast<unsigned>(subsys); }

const char* logLevelName(LogLevel level);
const char* logSubsysName(LogSubsys subsys);

/// "DEBUG", "info", ... (case-insensitive); nullopt for anything else.
std::optional<LogLevel> parseLogLevel(std::string_view text);

/// The legacy MSCCLPP_DEBUG names: VERSION and WARN = Warn, INFO = Info, TRACE = Debug, ABORT = Error.
std::optional<LogLevel> parseLegacyDebugLevel(std::string_view text);

/// "NET,CONN", "ALL", "^ENV" (case-insensitive). Names it does not know are appended to `unknown`
/// (comma separated) and otherwise ignored.
LogSubsysMask parseLogSubsys(std::string_view text, std::string* unknown = nullptr);

struct LogConfig {
  LogLevel level = LogLevel::Error;
  LogSubsysMask subsysMask = kAllLogSubsys;
  std::string filePath;  // empty: stderr
  /// Problems found while building the configuration (bad values); logged once the logger exists.
  std::string problems;
};

/// The configuration the environment asks for, with the precedence described above.
LogConfig logConfigFromEnv(const Env& env);

class Logger {
 public:
  explicit Logger(LogConfig config);
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  bool enabled(LogLevel level, LogSubsys subsys) const {
    return level >= config_.level && (config_.subsysMask & logSubsysBit(subsys)) != 0;
  }

  /// Writes one line: "<host>:<pid>:<tid> [<tag>] LEVEL SUBSYS file:line message". Thread-safe.
  void write(LogLevel level, LogSubsys subsys, const char* file, int line, const std::string& message);

  /// A short tag that goes into every line of this process, e.g. "rank 3" once the bootstrap knows it.
  void setTag(const std::string& tag);

  /// Sends lines to `sink` instead of the file or stderr (nullptr restores it). The line has no
  /// trailing newline.
  void setSink(std::function<void(const std::string&)> sink);

  const LogConfig& config() const { return config_; }

 private:
  LogConfig config_;
  std::FILE* file_ = nullptr;
  bool ownsFile_ = false;
  std::string hostPid_;
  std::string tag_;
  std::function<void(const std::string&)> sink_;
  std::mutex mutex_;
};

/// The process-wide logger, configured from env() on first use.
Logger& logger();

}  // namespace mscclpp

#define MSCCLPP_LOG(level, subsys, ...)                                                                              \
  do {                                                                                                               \
    ::mscclpp::Logger& mscclppLogger_ = ::mscclpp::logger();                                                         \
    if (mscclppLogger_.enabled(level, ::mscclpp::LogSubsys::subsys)) {                                               \
      mscclppLogger_.write(level, ::mscclpp::LogSubsys::subsys, __FILE__, __LINE__, ::mscclpp::concat(__VA_ARGS__)); \
    }                                                                                                                \
  } while (0)

#define LOG_DEBUG(subsys, ...) MSCCLPP_LOG(::mscclpp::LogLevel::Debug, subsys, __VA_ARGS__)
#define LOG_INFO(subsys, ...) MSCCLPP_LOG(::mscclpp::LogLevel::Info, subsys, __VA_ARGS__)
#define LOG_WARN(subsys, ...) MSCCLPP_LOG(::mscclpp::LogLevel::Warn, subsys, __VA_ARGS__)
#define LOG_ERROR(subsys, ...) MSCCLPP_LOG(::mscclpp::LogLevel::Error, subsys, __VA_ARGS__)

#endif  // MSCCLPP_COMMON_LOGGER_HPP_

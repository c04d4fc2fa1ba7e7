// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include "common/logger.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <mscclpp/env.hpp>

#include "common/env_builder.hpp"

namespace mscclpp {
namespace {

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

// "%h" → host name, "%p" → pid, "%%" → "%": one file per process when several share a path.
std::string expandLogPath(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[i + 1];
      if (c == 'h') {
        out += hostName();
        ++i;
        continue;
      }
      if (c == 'p') {
        out += std::to_string(getpid());
        ++i;
        continue;
      }
      if (c == '%') {
        out += '%';
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

const char* shortFileName(const char* path) {
  // Keep "layer/file.cc": enough to find the file, short enough to read.
  const char* last = std::strrchr(path, '/');
  if (!last) return path;
  const char* p = last;
  while (p > path && *(p - 1) != '/') --p;
  return p == path ? path : p;
}

}  // namespace

const char* logLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::Debug:
      return "DEBUG";
    case LogLevel::Info:
      return "INFO";
    case LogLevel::Warn:
      return "WARN";
    case LogLevel::Error:
      return "ERROR";
    case LogLevel::None:
      return "NONE";
  }
  return "?";
}

const char* logSubsysName(LogSubsys subsys) {
  switch (subsys) {
#define MSCCLPP_LOG_SUBSYS_CASE(name) \
  case LogSubsys::name:               \
    return #name;
    MSCCLPP_FOR_EACH_LOG_SUBSYS(MSCCLPP_LOG_SUBSYS_CASE)
#undef MSCCLPP_LOG_SUBSYS_CASE
    case LogSubsys::Count:
      break;
  }
  return "?";
}

std::optional<LogLevel> parseLogLevel(std::string_view text) {
  std::string upper = toUpper(text);
  if (upper == "DEBUG" || upper == "TRACE") return LogLevel::Debug;
  if (upper == "INFO") return LogLevel::Info;
  if (upper == "WARN" || upper == "WARNING") return LogLevel::Warn;
  if (upper == "ERROR") return LogLevel::Error;
  if (upper == "NONE" || upper == "OFF") return LogLevel::None;
  return std::nullopt;
}

std::optional<LogLevel> parseLegacyDebugLevel(std::string_view text) {
  std::string upper = toUpper(text);
  if (upper == "VERSION" || upper == "WARN") return LogLevel::Warn;
  if (upper == "INFO") return LogLevel::Info;
  if (upper == "TRACE") return LogLevel::Debug;
  if (upper == "ABORT") return LogLevel::Error;
  return std::nullopt;
}

LogSubsysMask parseLogSubsys(std::string_view text, std::string* unknown) {
  bool invert = false;
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (!text.empty() && text.front() == '^') {
    invert = true;
    text.remove_prefix(1);
  }
  LogSubsysMask mask = 0;
  for (const std::string& item : splitList(text)) {
    std::string name = toUpper(item);
    if (name == "ALL") {
      mask = kAllLogSubsys;
      continue;
    }
    bool found = false;
    for (unsigned i = 0; i < static_cast<unsigned>(LogSubsys::Count); ++i) {
      if (name == logSubsysName(static_cast<LogSubsys>(i))) {
        mask |= 1u << i;
        found = true;
      }
    }
    if (!found && unknown) {
      if (!unknown->empty()) *unknown += ",";
      *unknown += item;
    }
  }
  return invert ? (kAllLogSubsys & ~mask) : mask;
}

LogConfig logConfigFromEnv(const Env& env) {
  LogConfig config;
  config.problems = EnvBuilder::problems(env);
  if (!EnvBuilder::isSet(env, "MSCCLPP_LOG_LEVEL") && EnvBuilder::isSet(env, "MSCCLPP_DEBUG")) {
    if (auto level = parseLegacyDebugLevel(env.debug)) {
      config.level = *level;
    } else {
      config.problems += concat("MSCCLPP_DEBUG='", env.debug, "' is not one of VERSION WARN INFO ABORT TRACE; ");
    }
  } else if (auto level = parseLogLevel(env.logLevel)) {
    config.level = *level;
  } else {
    config.problems += concat("MSCCLPP_LOG_LEVEL='", env.logLevel, "' is not one of DEBUG INFO WARN ERROR NONE; ");
  }

  const std::string& subsys =
      (!EnvBuilder::isSet(env, "MSCCLPP_LOG_SUBSYS") && EnvBuilder::isSet(env, "MSCCLPP_DEBUG_SUBSYS"))
          ? env.debugSubsys
          : env.logSubsys;
  std::string unknown;
  config.subsysMask = parseLogSubsys(subsys, &unknown);
  if (!unknown.empty()) {
    config.problems += concat("unknown log subsystem(s) '", unknown, "' ignored; ");
  }
  config.filePath = !env.logFile.empty() ? env.logFile : env.debugFile;
  return config;
}

Logger::Logger(LogConfig config) : config_(std::move(config)) {
  hostPid_ = hostName() + ":" + std::to_string(getpid());
  if (!config_.filePath.empty()) {
    std::string path = expandLogPath(config_.filePath);
    file_ = std::fopen(path.c_str(), "a");
    if (file_) {
      ownsFile_ = true;
    } else {
      config_.problems += concat("cannot open log file '", path, "' (", std::strerror(errno), "), logging to stderr; ");
    }
  }
  if (!file_) file_ = stderr;
  if (!config_.problems.empty()) {
    std::string message = "configuration problems: " + config_.problems;
    if (enabled(LogLevel::Warn, LogSubsys::ENV)) write(LogLevel::Warn, LogSubsys::ENV, __FILE__, __LINE__, message);
  }
}

Logger::~Logger() {
  if (ownsFile_) std::fclose(file_);
}

void Logger::write(LogLevel level, LogSubsys subsys, const char* file, int line, const std::string& message) {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  int micros =
      static_cast<int>(std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000);
  std::tm tm;
  localtime_r(&seconds, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);

  std::lock_guard<std::mutex> lock(mutex_);
  std::string text = concat(stamp, ".", micros / 1000 + 1000, " ", hostPid_, ":", syscall(SYS_gettid));
  text.erase(text.find('.') + 1, 1);  // the +1000 above zero-pads milliseconds to three digits
  if (!tag_.empty()) text += " [" + tag_ + "]";
  text += concat(" mscclpp ", logLevelName(level), " ", logSubsysName(subsys), " ", shortFileName(file), ":", line, " ",
                 message);
  if (sink_) {
    sink_(text);
    return;
  }
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

void Logger::setTag(const std::string& tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  tag_ = tag;
}

void Logger::setSink(std::function<void(const std::string&)> sink) {
  std::lock_guard<std::mutex> lock(mutex_);
  sink_ = std::move(sink);
}

Logger& logger() {
  // Never destroyed: other static destructors (a bootstrap torn down at exit) may still log.
  static Logger* instance = new Logger(logConfigFromEnv(*env()));
  return *instance;
}

}  // namespace mscclpp

// Structured logs of the service on stderr: one line per event, `event key=value ...` after
// spdlog's time and level (the only place that uses spdlog). Thread safety: thread-safe.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace astraeus::service {

enum class LogLevel { Debug, Info, Warn, Error };

/// Sets the least level written ("debug", "info", "warn", "error").
void set_log_level(std::string_view level);
/// Writes `event` with its fields (values quoted when they hold spaces or quotes).
void log(LogLevel level, std::string_view event,
         std::initializer_list<std::pair<std::string_view, std::string>> fields = {});

}  // namespace astraeus::service

#include "astraeus/service/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace astraeus::service {
namespace {

spdlog::logger& logger() {
    static std::shared_ptr<spdlog::logger> l = [] {
        auto s = spdlog::stderr_logger_mt("astraeus");
        s->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
        return s;
    }();
    return *l;
}

std::string quoted(const std::string& v) {
    if (!v.empty() && v.find_first_of(" \"=\n") == std::string::npos) return v;
    std::string out = "\"";
    for (char ch : v) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (ch == '\n') {
            out += "\\n";
            continue;
        }
        out += ch;
    }
    out += '"';
    return out;
}

}  // namespace

void set_log_level(std::string_view level) {
    if (level == "debug") logger().set_level(spdlog::level::debug);
    else if (level == "warn") logger().set_level(spdlog::level::warn);
    else if (level == "error") logger().set_level(spdlog::level::err);
    else logger().set_level(spdlog::level::info);
}

void log(LogLevel level, std::string_view event,
         std::initializer_list<std::pair<std::string_view, std::string>> fields) {
    std::string line(event);
    for (const auto& [k, v] : fields) {
        line += ' ';
        line += k;
        line += '=';
        line += quoted(v);
    }
    switch (level) {
        case LogLevel::Debug: logger().debug(line); break;
        case LogLevel::Info: logger().info(line); break;
        case LogLevel::Warn: logger().warn(line); break;
        case LogLevel::Error: logger().error(line); break;
    }
    logger().flush();
}

}  // namespace astraeus::service

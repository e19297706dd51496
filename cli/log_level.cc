#include "cli/log_level.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string_view>

namespace nrt::cli {
namespace {

spdlog::level::level_enum level_from_environment(spdlog::level::level_enum fallback) {
  const char* text = std::getenv("NRT_LOG_LEVEL");
  if (text == nullptr) return fallback;
  if (text[0] == '\0') {  // set but empty is a mistake, not the default in silence
    spdlog::warn("NRT_LOG_LEVEL is set but empty (trace, debug, info, warn, error, critical, off); using {}",
                 spdlog::level::to_string_view(fallback));
    return fallback;
  }
  // spdlog maps any unknown name to `off`; only the word itself may silence the log.
  const auto level = spdlog::level::from_str(text);
  if (level == spdlog::level::off && std::string_view(text) != "off") {
    spdlog::warn("NRT_LOG_LEVEL='{}' is not a level (trace, debug, info, warn, error, critical, off); using {}", text,
                 spdlog::level::to_string_view(fallback));
    return fallback;
  }
  return level;
}

}  // namespace

void configure_logging(const char* tool, int verbosity, bool quiet) {
  auto logger = spdlog::stderr_logger_mt(tool);
  logger->set_pattern("%n: %l: %v");
  spdlog::set_default_logger(logger);

  auto level = level_from_environment(spdlog::level::warn);
  if (quiet) {
    level = spdlog::level::err;
  } else if (verbosity == 1) {
    level = spdlog::level::info;
  } else if (verbosity == 2) {
    level = spdlog::level::debug;
  } else if (verbosity >= 3) {
    level = spdlog::level::trace;
  }
  spdlog::set_level(level);
}

}  // namespace nrt::cli

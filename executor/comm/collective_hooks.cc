#include "executor/comm/collective_hooks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace nrt::exec {
namespace {

Error bad(const char* variable, std::string_view value, const char* expected) {
  return make_error(ErrorCode::InvalidArgument,
                    std::string(variable) + "='" + std::string(value) + "' is not " + expected);
}

Status read_flag(const char* variable, bool& out) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return Status::Ok();
  const std::string_view value(text);
  if (value == "1" || value == "true") {
    out = true;
  } else if (value == "0" || value == "false") {
    out = false;
  } else {
    return bad(variable, value, "0 or 1");
  }
  return Status::Ok();
}

}  // namespace

Result<CollectiveHooksOptions> collective_hooks_from_env() {
  CollectiveHooksOptions options;
  NRT_RETURN_IF_ERROR(read_flag("NRT_NAN_CHECK", options.nan_check));
  NRT_RETURN_IF_ERROR(read_flag("NRT_FR_DUMP_ON_EXIT", options.fr_dump_on_exit));
  if (const char* text = std::getenv("NRT_FR_BUFFER_SIZE"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    errno = 0;
    const long long size = std::strtoll(text, &end, 10);
    // A bound keeps a typo from reserving gigabytes: 10 million entries is ~ several GB already.
    if (errno != 0 || *end != '\0' || size < 0 || size > 10'000'000) {
      return bad("NRT_FR_BUFFER_SIZE", text, "a count from 0 to 10000000");
    }
    options.fr_buffer_size = static_cast<size_t>(size);
  }
  if (const char* text = std::getenv("NRT_FR_DUMP_PREFIX"); text != nullptr && *text != '\0') {
    options.fr_dump_prefix = text;
  }
  if (const char* text = std::getenv("NRT_COLLECTIVE_TIMEOUT_S"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    errno = 0;
    const double seconds = std::strtod(text, &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 || seconds > 1e7) {
      return bad("NRT_COLLECTIVE_TIMEOUT_S", text, "a number of seconds above 0");
    }
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000)));
  }
  return options;
}

}  // namespace nrt::exec

#include "executor/comm/collective_hooks.h"

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/number_text.h"

namespace nrt::exec {
namespace {

// An unset variable keeps the default; a set one must be what it says (core/number_text.h: an
// empty value is an error, not the default).
Status read_flag(const char* variable, bool& out) {
  const char* text = std::getenv(variable);
  if (text == nullptr) return Status::Ok();
  NRT_TRY(value, parse_switch_text(variable, text));
  out = *value;
  return Status::Ok();
}

}  // namespace

Result<CollectiveHooksOptions> collective_hooks_from_env() {
  CollectiveHooksOptions options;
  NRT_RETURN_IF_ERROR(read_flag("NRT_NAN_CHECK", options.nan_check));
  NRT_RETURN_IF_ERROR(read_flag("NRT_FR_DUMP_ON_EXIT", options.fr_dump_on_exit));
  if (const char* text = std::getenv("NRT_FR_BUFFER_SIZE"); text != nullptr) {
    // The cap keeps a typo from reserving gigabytes: 10 million entries is several GB already.
    NRT_TRY(size, parse_integer_text("NRT_FR_BUFFER_SIZE", text, 0, 10'000'000));
    options.fr_buffer_size = static_cast<size_t>(*size);
  }
  if (const char* text = std::getenv("NRT_FR_DUMP_PREFIX"); text != nullptr) {
    if (*text == '\0') {
      return make_error(ErrorCode::InvalidArgument, "NRT_FR_DUMP_PREFIX is empty (unset it for the default)");
    }
    options.fr_dump_prefix = text;
    // Checked now, not when a dump is due (after a timeout: the dump would be lost).
    const std::string prefix(text);
    const size_t slash = prefix.rfind('/');
    const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : prefix.substr(0, slash);
    std::error_code ec;
    if (!std::filesystem::is_directory(directory, ec)) {
      return make_error(ErrorCode::InvalidArgument,
                        "NRT_FR_DUMP_PREFIX='" + prefix + "': its directory '" + directory + "' does not exist");
    }
    if (::access(directory.c_str(), W_OK) != 0) {
      return make_error(ErrorCode::InvalidArgument,
                        "NRT_FR_DUMP_PREFIX='" + prefix + "': its directory '" + directory + "' is not writable");
    }
  }
  if (const char* text = std::getenv("NRT_FR_DUMP_FORMAT"); text != nullptr) {
    const std::string format(text);
    if (format == "nrt") {
      options.fr_dump_format = FlightRecorderFormat::kNrt;
    } else if (format == "torch") {
      options.fr_dump_format = FlightRecorderFormat::kTorch;
    } else {
      return make_error(ErrorCode::InvalidArgument,
                        "NRT_FR_DUMP_FORMAT='" + format.substr(0, 64) + "': nrt (JSON, the default) or torch (torch's pickle)");
    }
  }
  if (const char* text = std::getenv("NRT_COLLECTIVE_TIMEOUT_S"); text != nullptr) {
    // From the watchdog's 1 ms resolution to about 115 days.
    NRT_TRY(seconds, parse_number_text("NRT_COLLECTIVE_TIMEOUT_S", text, 0.001, 1e7));
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(*seconds * 1000)));
  }
  return options;
}

}  // namespace nrt::exec

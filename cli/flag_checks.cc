#include <limits>

#include "core/number_text.h"
#include "cli/flag_checks.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "executor/runtime/memory_budget.h"
#include "core/device.h"
#include "core/error.h"

namespace nrt::cli {

const CLI::Validator& finite_non_negative() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        const double infinity = std::numeric_limits<double>::infinity();
        if (auto read = parse_number_text("value", text, -infinity, infinity); !read) return read.error().message;
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < 0) {
          return "Value " + text + " is not a finite number >= 0";
        }
        return {};
      },
      "FINITE>=0");
  return validator;
}

CLI::Validator integer_in(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        auto value = parse_integer_text("value", text, min, max);
        return value ? std::string() : value.error().message;
      },
      "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

const CLI::Validator& memory_size() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        auto bytes = exec::parse_memory_size(text);
        return bytes ? std::string() : bytes.error().message;
      },
      "SIZE");
  return validator;
}

const CLI::Validator& device_name() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        auto device = parse_device(text);
        return device ? std::string() : device.error().message;
      },
      "DEVICE");
  return validator;
}

void print_usage_errors_with_code(CLI::App& app) {
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    return error_id(ErrorCode::InvalidArgument) + " " + std::string(error_name(ErrorCode::InvalidArgument)) + ": " +
           CLI::FailureMessage::simple(failed, error);
  });
}

void report_escaped_bad_alloc(const char* tool, const std::bad_alloc& failure) {
  const Error error = exec::memory_error("out of memory", failure);
  std::fprintf(stderr, "%s: error: %s\n", tool, error.to_string().c_str());
}

}  // namespace nrt::cli

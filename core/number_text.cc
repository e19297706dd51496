#include "core/number_text.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

namespace nrt {
namespace {

std::string quoted(std::string_view what, std::string_view text) {
  return std::string(what) + "='" + std::string(text) + "'";
}

// The checks every kind shares: set, and nothing around the number.
std::optional<Error> shape_problem(std::string_view what, std::string_view text) {
  if (text.empty()) {
    return make_error(ErrorCode::InvalidArgument, std::string(what) + " is empty (unset it for the default)");
  }
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  if (space(text.front()) || space(text.back())) {
    return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " has spaces around the number");
  }
  return std::nullopt;
}

template <class T>
std::string shown(T value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

Result<int64_t> parse_integer_text(std::string_view what, std::string_view text, int64_t min, int64_t max) {
  if (auto problem = shape_problem(what, text)) return *problem;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(copy.c_str(), &end, 10);
  if (end == copy.c_str() || *end != '\0') {
    return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " is not an integer");
  }
  if (errno == ERANGE || value > max) {
    return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " is above the cap of " + shown(max));
  }
  if (value < min) return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " is below the minimum of " + shown(min));
  return static_cast<int64_t>(value);
}

Result<double> parse_number_text(std::string_view what, std::string_view text, double min, double max) {
  if (auto problem = shape_problem(what, text)) return *problem;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || *end != '\0' || std::isnan(value)) {
    return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " is not a number");
  }
  // strtod's ERANGE: past double's range (above every cap) or below its smallest (below every
  // minimum above 0); the bounds then say which.
  if (value > max || (errno == ERANGE && std::fabs(value) > 1)) {
    return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " is above the cap of " + shown(max));
  }
  if (value < min) return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " is below the minimum of " + shown(min));
  return value;
}

Result<bool> parse_switch_text(std::string_view what, std::string_view text) {
  if (auto problem = shape_problem(what, text)) return *problem;
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return make_error(ErrorCode::InvalidArgument, quoted(what, text) + " is not 0, 1, true or false");
}

}  // namespace nrt

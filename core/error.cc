#include "core/error.h"

#include <cstdio>

namespace nrt {

std::string_view error_name(ErrorCode code) {
  switch (code) {
#define NRT_ERROR_NAME(name, number, summary) \
  case ErrorCode::name:                       \
    return #name;
    NRT_ERROR_CODES(NRT_ERROR_NAME)
#undef NRT_ERROR_NAME
  }
  return "Unknown";
}

std::string_view error_summary(ErrorCode code) {
  switch (code) {
#define NRT_ERROR_SUMMARY(name, number, summary) \
  case ErrorCode::name:                          \
    return summary;
    NRT_ERROR_CODES(NRT_ERROR_SUMMARY)
#undef NRT_ERROR_SUMMARY
  }
  return "unknown error";
}

std::string error_id(ErrorCode code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "NRT-E%03d", static_cast<int>(code));
  return buf;
}

std::string Error::to_string() const {
  return error_id(code) + " " + std::string(error_name(code)) + ": " + message;
}

}  // namespace nrt

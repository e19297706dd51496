// Exit statuses of nrt-inspect, shared by every subcommand (docs/ERRORS.md, "Exit codes"): 0 ok / valid, 1 invalid
// input, 2 usage or I/O trouble.
#pragma once

#include "core/error.h"

namespace nrt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;

// 1xx codes (I/O, unknown format, bad argument) are the caller's or the system's trouble: 2.
// Every other code says the input itself is invalid: 1.
inline int exit_status_for(const Error& error) {
  const int code = static_cast<int>(error.code);
  if (code == 0) return kExitOk;
  return code >= 100 && code < 200 ? kExitUsage : kExitInvalid;
}

}  // namespace nrt::cli

// What the reliability hooks of collectives do, from the environment (docs/COLLECTIVES.md has the
// table beside torch's variables):
//   NRT_NAN_CHECK=0|1              check send buffers for NaN before every collective (default 0)
//   NRT_FR_BUFFER_SIZE=N           flight recorder entries per rank (default 2000; 0 records nothing)
//   NRT_FR_DUMP_PREFIX=PATH        dumps go to <PATH><rank>.json (default nrt_fr_trace_)
//   NRT_FR_DUMP_FORMAT=nrt|torch   nrt's JSON (default), or torch's pickle in <PATH><rank>, as
//                                  torch's flight recorder writes it (torchfrtrace reads it)
//   NRT_FR_DUMP_ON_EXIT=0|1        dump at exit too (default 0)
//   NRT_COLLECTIVE_TIMEOUT_S=S     watchdog timeout, seconds, > 0 (default 600)
// A malformed value is an InvalidArgument naming the variable, never a silent default.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "core/error.h"

namespace nrt::exec {

enum class FlightRecorderFormat { kNrt, kTorch };

struct CollectiveHooksOptions {
  bool nan_check = false;
  size_t fr_buffer_size = 2000;
  std::string fr_dump_prefix = "nrt_fr_trace_";
  bool fr_dump_on_exit = false;
  FlightRecorderFormat fr_dump_format = FlightRecorderFormat::kNrt;
  std::chrono::milliseconds timeout{600'000};

  // <fr_dump_prefix><rank>.json; torch's format: <fr_dump_prefix><rank>, as torch names its dumps.
  std::string dump_path(int rank) const {
    return fr_dump_prefix + std::to_string(rank) + (fr_dump_format == FlightRecorderFormat::kTorch ? "" : ".json");
  }
};

Result<CollectiveHooksOptions> collective_hooks_from_env();

}  // namespace nrt::exec

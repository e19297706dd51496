// Flight-recorder dumps in torch's format, both ways: the pickle torch's flight recorder writes
// (file <prefix><rank>), which torch's analyzer (`torchfrtrace DIR`) reads.
//
// Top level: `version` ("2.10"), `comm_lib_version`, `pg_config` ({group name: {"name", "desc",
// "ranks": "[0, 1]"}}), `pg_status` ({pg_id: last enqueued/started/completed collective}),
// `entries`. Each entry: `record_id`, `pg_id`, `process_group` (name, desc), `collective_seq_id`,
// `p2p_seq_id`, `op_id`, `profiling_name` ("<backend>:<op>", with torch's op names:
// all_gather_into_tensor is `_all_gather_base`, reduce_scatter_tensor `_reduce_scatter_base`),
// `time_created_ns`, `duration_ms`, `input_sizes`, `input_dtypes` and the outputs' (c10 names:
// Float, BFloat16, ...), `state` (scheduled, started, completed; a failed one is "started": it
// never completed), `time_discovered_started_ns`, `time_discovered_completed_ns`, `retired`,
// `timeout_ms`, `is_p2p`, `frames` (the issuing program node as the one frame). What torch has no
// field for (the node, a failure's error, the dump's reason, rank and world) travels in keys named
// `nrt_*`, which torch's analyzer ignores, so a dump read back loses nothing.
//
// Reading one (nrt-inspect fr-analyze): through the restricted pickle reader with an empty
// allowlist (torch's dumps hold only dicts, lists, tuples, strings, numbers, None), the rank from
// the file name's trailing digits as torch's loader takes it, each group's size and this rank's
// place in it from `pg_config`, then the checks of nrt's own dumps (check_flight_recorder_dump).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/comm/flight_recorder.h"

namespace nrt::exec {

inline constexpr const char* kTorchFlightRecorderVersion = "2.10";

std::vector<uint8_t> flight_recorder_dump_to_torch(const FlightRecorderDump& dump);

// `rank`: the dumping rank (the file name's trailing digits); `what` names the file in messages.
Result<FlightRecorderDump> flight_recorder_dump_from_torch(std::span<const uint8_t> bytes, int rank,
                                                           const std::string& what);

// Writes the torch-format dump to `path` atomically.
Status write_torch_flight_recorder_dump(const FlightRecorderDump& dump, const std::string& path);

}  // namespace nrt::exec

// The flight recorder: a ring buffer of the last N collectives of this process, as torch's
// (TORCH_FR_BUFFER_SIZE) keeps them, with the program node that issued each. Every traced process
// group (executor/comm/traced_process_group.h) writes into one; it is dumped as JSON (format
// "nrt-flight-recorder" version 1, docs/COLLECTIVES.md) on a timeout, a failed collective, a
// signal, or at exit, and `nrt-inspect fr-analyze` reads the dumps of every rank back.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nrt::exec {

enum class CollectiveState : uint8_t { kScheduled, kStarted, kCompleted, kFailed };
const char* collective_state_name(CollectiveState state);  // "scheduled", "started", ...

struct CollectiveRecord {
  uint64_t record_id = 0;         // this process's count of records, from 0
  std::string pg_name;            // the process group
  int pg_rank = 0;                // this process's rank in it
  int pg_size = 1;
  std::string backend;            // "mpi", "single", ...
  int64_t collective_seq_id = 0;  // per group: 1, 2, ... for collectives; 0 for point-to-point
  int64_t p2p_seq_id = 0;         // per group: 1, 2, ... for point-to-point; 0 for collectives
  std::string op;                 // "all_reduce", "all_gather_into_tensor", ...
  std::string node;               // the program node that issued it; empty outside a program
  std::vector<std::vector<int64_t>> input_sizes, output_sizes;
  std::vector<std::string> input_dtypes, output_dtypes;  // short names: f32, bf16, ...
  CollectiveState state = CollectiveState::kScheduled;
  int64_t time_created_ns = 0;    // wall clock (ns since the epoch), for matching across ranks
  int64_t time_started_ns = 0;    // 0: not yet
  int64_t time_completed_ns = 0;  // 0: not yet
  double duration_ms = -1;        // completed - started; -1 while not completed
  int64_t timeout_ms = 0;
  std::string error;              // a failed collective's error

  int64_t numel_in() const;
  int64_t numel_out() const;
};

// Wall-clock nanoseconds since the epoch.
int64_t wall_clock_ns();

class FlightRecorder {
 public:
  explicit FlightRecorder(size_t capacity = 2000) : capacity_(capacity) {}

  size_t capacity() const { return capacity_; }
  // Appends a record (its record_id assigned here), dropping the oldest past the capacity;
  // returns the id. Capacity 0 records nothing (and returns an id all the same).
  uint64_t add(CollectiveRecord record);
  // Updates a record still in the buffer; a record already dropped is left alone.
  void started(uint64_t id, int64_t time_ns);
  void completed(uint64_t id, int64_t time_ns);
  void failed(uint64_t id, int64_t time_ns, const std::string& error);
  // The records in the buffer, oldest first.
  std::vector<CollectiveRecord> entries() const;
  uint64_t recorded() const;  // records ever added

 private:
  CollectiveRecord* find(uint64_t id);  // under mutex_

  size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<CollectiveRecord> ring_;  // ring_[id % capacity_]
  uint64_t next_id_ = 0;
};

// A dump: what one rank's recorder held when it was written, and why.
struct FlightRecorderDump {
  static constexpr const char* kFormat = "nrt-flight-recorder";
  static constexpr int kVersion = 1;
  int rank = 0;                   // in the world
  int world_size = 1;
  std::string reason;             // "timeout", "collective failed", "SIGTERM", "SIGUSR1", "exit", ...
  int64_t dump_time_ns = 0;
  uint64_t recorded = 0;          // records ever added (more than entries when the ring wrapped)
  std::vector<CollectiveRecord> entries;
  // Each traced group's members (world ranks, in group-rank order; empty when unknown). Written
  // in torch's format only (its pg_config); nrt's JSON identifies groups by name and size.
  std::map<std::string, std::vector<int>> groups;
};

// The ops a TracedProcessGroup records (traced_process_group.cc): a dump naming another is not one
// nrt wrote.
inline constexpr std::string_view kRecordedOps[] = {"all_reduce",    "all_gather_into_tensor", "reduce_scatter_tensor",
                                                    "all_to_all_single", "broadcast",          "barrier"};

std::string to_json(const FlightRecorderDump& dump);
// Parses a dump; a malformed one (or another format or version) is InvalidArgument naming what.
// Every field is checked against the dump's own world: a group's size within the world and one per
// group, this rank's group rank below it and one per group, sequence numbers positive (exactly one
// of collective and point-to-point), sizes non-negative, ops and dtypes known, `recorded` at
// least the entries held. Keys are unique and nesting bounded (core/strict_json.h).
Result<FlightRecorderDump> flight_recorder_dump_from_json(const std::string& text);

// The checks flight_recorder_dump_from_json makes of a parsed dump: its rank within a world of 1
// to 2^20, `recorded` at least the entries, and each entry against the world and its group.
Status check_flight_recorder_dump(const FlightRecorderDump& dump);

// Writes a dump's bytes to `path` (through a temporary file renamed into place, so a reader never
// sees half a dump); a symbolic link is refused.
Status write_dump_file(const std::string& path, std::span<const uint8_t> bytes);

// Writes the dump to `path` as JSON (write_dump_file).
Status write_flight_recorder_dump(const FlightRecorderDump& dump, const std::string& path);

}  // namespace nrt::exec

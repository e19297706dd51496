#include "executor/comm/flight_recorder.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/scalar_type.h"
#include "core/strict_json.h"
#include "serializer/atomic_file.h"
#include "serializer/program_text.h"

namespace nrt::exec {
namespace {

using Json = nlohmann::json;

constexpr const char* kStateNames[] = {"scheduled", "started", "completed", "failed"};

int64_t numel(const std::vector<std::vector<int64_t>>& sizes) {
  int64_t total = 0;
  for (const auto& shape : sizes) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    total += n;
  }
  return total;
}

Json record_json(const CollectiveRecord& r) {
  return Json{{"record_id", r.record_id},
              {"pg_name", r.pg_name},
              {"pg_rank", r.pg_rank},
              {"pg_size", r.pg_size},
              {"backend", r.backend},
              {"collective_seq_id", r.collective_seq_id},
              {"p2p_seq_id", r.p2p_seq_id},
              {"op", r.op},
              {"node", r.node},
              {"input_sizes", r.input_sizes},
              {"output_sizes", r.output_sizes},
              {"input_dtypes", r.input_dtypes},
              {"output_dtypes", r.output_dtypes},
              {"state", collective_state_name(r.state)},
              {"time_created_ns", r.time_created_ns},
              {"time_started_ns", r.time_started_ns},
              {"time_completed_ns", r.time_completed_ns},
              {"duration_ms", r.duration_ms < 0 ? Json(nullptr) : Json(r.duration_ms)},
              {"timeout_ms", r.timeout_ms},
              {"error", r.error}};
}

Error malformed(const std::string& what) {
  return make_error(ErrorCode::InvalidArgument, "flight recorder dump: " + what);
}

// A JSON integer that fits T (a float, or a number out of T's range, is no integer field).
template <typename T>
bool integer_of(const Json& j, T& out) {
  if (!j.is_number_integer()) return false;
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    out = static_cast<T>(v);
    return true;
  }
  const auto v = j.get<int64_t>();
  if constexpr (std::is_unsigned_v<T>) {
    if (v < 0) return false;
  } else {
    if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) || v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      return false;
    }
  }
  out = static_cast<T>(v);
  return true;
}

bool value_of(const Json& j, std::string& out) {
  if (!j.is_string()) return false;
  out = j.get<std::string>();
  return true;
}

template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
bool value_of(const Json& j, T& out) {
  return integer_of(j, out);
}

template <typename T>
bool value_of(const Json& j, std::vector<T>& out) {
  if (!j.is_array()) return false;
  out.clear();
  out.reserve(j.size());
  for (const auto& element : j) {
    T value{};
    if (!value_of(element, value)) return false;
    out.push_back(std::move(value));
  }
  return true;
}

// Reads field `key` of `object` into `out`; a missing field or one of the wrong type is an error.
template <typename T>
Status read(const Json& object, const char* key, T& out, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) return malformed(where + ": missing field '" + key + "'");
  if (!value_of(*it, out)) return malformed(where + ": field '" + key + "' has the wrong type");
  return Status::Ok();
}

Result<CollectiveRecord> record_from_json(const Json& j, size_t index) {
  const std::string where = "entry " + std::to_string(index);
  if (!j.is_object()) return malformed(where + " is not an object");
  CollectiveRecord r;
  std::string state;
  NRT_RETURN_IF_ERROR(read(j, "record_id", r.record_id, where));
  NRT_RETURN_IF_ERROR(read(j, "pg_name", r.pg_name, where));
  NRT_RETURN_IF_ERROR(read(j, "pg_rank", r.pg_rank, where));
  NRT_RETURN_IF_ERROR(read(j, "pg_size", r.pg_size, where));
  NRT_RETURN_IF_ERROR(read(j, "backend", r.backend, where));
  NRT_RETURN_IF_ERROR(read(j, "collective_seq_id", r.collective_seq_id, where));
  NRT_RETURN_IF_ERROR(read(j, "p2p_seq_id", r.p2p_seq_id, where));
  NRT_RETURN_IF_ERROR(read(j, "op", r.op, where));
  NRT_RETURN_IF_ERROR(read(j, "node", r.node, where));
  NRT_RETURN_IF_ERROR(read(j, "input_sizes", r.input_sizes, where));
  NRT_RETURN_IF_ERROR(read(j, "output_sizes", r.output_sizes, where));
  NRT_RETURN_IF_ERROR(read(j, "input_dtypes", r.input_dtypes, where));
  NRT_RETURN_IF_ERROR(read(j, "output_dtypes", r.output_dtypes, where));
  NRT_RETURN_IF_ERROR(read(j, "state", state, where));
  NRT_RETURN_IF_ERROR(read(j, "time_created_ns", r.time_created_ns, where));
  NRT_RETURN_IF_ERROR(read(j, "time_started_ns", r.time_started_ns, where));
  NRT_RETURN_IF_ERROR(read(j, "time_completed_ns", r.time_completed_ns, where));
  NRT_RETURN_IF_ERROR(read(j, "timeout_ms", r.timeout_ms, where));
  NRT_RETURN_IF_ERROR(read(j, "error", r.error, where));
  auto duration = j.find("duration_ms");
  if (duration == j.end()) return malformed(where + ": missing field 'duration_ms'");
  if (duration->is_number()) {
    r.duration_ms = duration->get<double>();  // any JSON number is a double
  } else if (!duration->is_null()) {
    return malformed(where + ": field 'duration_ms' has the wrong type");
  }
  bool known = false;
  for (size_t s = 0; s < std::size(kStateNames); ++s) {
    if (state == kStateNames[s]) {
      r.state = static_cast<CollectiveState>(s);
      known = true;
    }
  }
  if (!known) return malformed(where + ": unknown state '" + state + "'");
  return r;
}

// One record against the dump's world and the groups its earlier records described.
Status check_record(const CollectiveRecord& r, size_t index, int world_size,
                    std::map<std::string, std::pair<int, int>>& groups) {
  const std::string where = "entry " + std::to_string(index) + " (process group '" + printable(r.pg_name) + "')";
  if (r.pg_size < 1 || r.pg_size > world_size) {
    return malformed(where + ": group size " + std::to_string(r.pg_size) + " in a world of " + std::to_string(world_size));
  }
  if (r.pg_rank < 0 || r.pg_rank >= r.pg_size) {
    return malformed(where + ": group rank " + std::to_string(r.pg_rank) + " in a group of " + std::to_string(r.pg_size));
  }
  const auto [known, added] = groups.emplace(r.pg_name, std::make_pair(r.pg_size, r.pg_rank));
  if (!added && known->second != std::make_pair(r.pg_size, r.pg_rank)) {
    return malformed(where + ": group size " + std::to_string(r.pg_size) + " and rank " + std::to_string(r.pg_rank) +
                     ", where an earlier entry had size " + std::to_string(known->second.first) + " and rank " +
                     std::to_string(known->second.second));
  }
  if (r.collective_seq_id < 0 || r.p2p_seq_id < 0 || (r.collective_seq_id > 0) == (r.p2p_seq_id > 0)) {
    return malformed(where + ": sequence numbers " + std::to_string(r.collective_seq_id) + " (collective) and " +
                     std::to_string(r.p2p_seq_id) + " (point-to-point): exactly one is positive");
  }
  if (std::find(std::begin(kRecordedOps), std::end(kRecordedOps), r.op) == std::end(kRecordedOps)) {
    return malformed(where + ": unknown op '" + printable(r.op) + "'");
  }
  for (const auto* sizes : {&r.input_sizes, &r.output_sizes}) {
    for (const auto& shape : *sizes) {
      for (int64_t extent : shape) {
        if (extent < 0) return malformed(where + ": negative size " + std::to_string(extent));
      }
    }
  }
  for (const auto* dtypes : {&r.input_dtypes, &r.output_dtypes}) {
    for (const auto& dtype : *dtypes) {
      if (!scalar_type_from_short_name(dtype)) return malformed(where + ": unknown dtype '" + printable(dtype) + "'");
    }
  }
  return Status::Ok();
}

}  // namespace

const char* collective_state_name(CollectiveState state) {
  const auto index = static_cast<size_t>(state);
  return index < std::size(kStateNames) ? kStateNames[index] : "?";
}

int64_t CollectiveRecord::numel_in() const { return numel(input_sizes); }
int64_t CollectiveRecord::numel_out() const { return numel(output_sizes); }

int64_t wall_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t FlightRecorder::add(CollectiveRecord record) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t id = next_id_++;
  if (capacity_ == 0) return id;
  record.record_id = id;
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(record));
  } else {
    ring_[id % capacity_] = std::move(record);
  }
  return id;
}

CollectiveRecord* FlightRecorder::find(uint64_t id) {
  if (capacity_ == 0 || ring_.empty()) return nullptr;
  CollectiveRecord& slot = ring_[id % capacity_];
  return slot.record_id == id && id < next_id_ ? &slot : nullptr;
}

void FlightRecorder::started(uint64_t id, int64_t time_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto* r = find(id)) {
    r->state = CollectiveState::kStarted;
    r->time_started_ns = time_ns;
  }
}

void FlightRecorder::completed(uint64_t id, int64_t time_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto* r = find(id)) {
    r->state = CollectiveState::kCompleted;
    r->time_completed_ns = time_ns;
    if (r->time_started_ns > 0) r->duration_ms = static_cast<double>(time_ns - r->time_started_ns) / 1e6;
  }
}

void FlightRecorder::failed(uint64_t id, int64_t time_ns, const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto* r = find(id)) {
    r->state = CollectiveState::kFailed;
    r->time_completed_ns = time_ns;
    r->error = error;
  }
}

std::vector<CollectiveRecord> FlightRecorder::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<CollectiveRecord> out;
  out.reserve(ring_.size());
  const uint64_t first = next_id_ - ring_.size();
  for (uint64_t id = first; id < next_id_; ++id) out.push_back(ring_[id % capacity_]);
  return out;
}

uint64_t FlightRecorder::recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_id_;
}

std::string to_json(const FlightRecorderDump& dump) {
  Json entries = Json::array();
  for (const auto& r : dump.entries) entries.push_back(record_json(r));
  Json j{{"format", FlightRecorderDump::kFormat},
         {"version", FlightRecorderDump::kVersion},
         {"rank", dump.rank},
         {"world_size", dump.world_size},
         {"reason", dump.reason},
         {"dump_time_ns", dump.dump_time_ns},
         {"recorded", dump.recorded},
         {"entries", std::move(entries)}};
  return j.dump() + "\n";  // one line: a dump on SIGTERM races the launcher's SIGKILL
}

Status check_flight_recorder_dump(const FlightRecorderDump& dump) {
  // Bounds keep an analysis of a hostile dump from listing billions of absent ranks.
  constexpr int kMaxWorld = 1 << 20;
  if (dump.world_size < 1 || dump.world_size > kMaxWorld || dump.rank < 0 || dump.rank >= dump.world_size) {
    return malformed("rank " + std::to_string(dump.rank) + " of world size " + std::to_string(dump.world_size) +
                     " is not a rank of a world of 1 to " + std::to_string(kMaxWorld) + " ranks");
  }
  if (dump.recorded < dump.entries.size()) {
    return malformed("'recorded' is " + std::to_string(dump.recorded) + " but the dump holds " +
                     std::to_string(dump.entries.size()) + " entries");
  }
  std::map<std::string, std::pair<int, int>> groups;  // name -> (size, this rank's group rank)
  for (size_t i = 0; i < dump.entries.size(); ++i) {
    NRT_RETURN_IF_ERROR(check_record(dump.entries[i], i, dump.world_size, groups));
  }
  return Status::Ok();
}

Result<FlightRecorderDump> flight_recorder_dump_from_json(const std::string& text) {
  // Each entry is converted as soon as it is parsed and left out of the document: a dump of 10^6
  // entries costs its records, not a JSON tree of them (several times the text).
  std::vector<CollectiveRecord> records;
  std::optional<Error> bad_entry;
  std::string top_key;  // the top-level key whose value is being parsed
  size_t elements = 0;  // of the top-level "entries"
  auto take = [&](int depth, Json::parse_event_t event, Json& value) {
    if (event == Json::parse_event_t::key && depth == 1) top_key = value.get<std::string>();
    if (depth != 2 || top_key != "entries") return true;
    if (event != Json::parse_event_t::object_end && event != Json::parse_event_t::array_end &&
        event != Json::parse_event_t::value) {
      return true;
    }
    const size_t index = elements++;
    if (bad_entry) return false;
    auto record = record_from_json(value, index);
    if (record) {
      records.push_back(std::move(*record));
    } else {
      bad_entry = record.error();
    }
    return false;
  };
  auto parsed = parse_strict_json(text, take);
  if (!parsed) return malformed(parsed.error().message);
  if (bad_entry) return *bad_entry;
  const Json j = std::move(*parsed);
  if (!j.is_object()) return malformed("not a JSON object");
  std::string format;
  int version = 0;
  NRT_RETURN_IF_ERROR(read(j, "format", format, "the dump"));
  if (format != FlightRecorderDump::kFormat) return malformed("format '" + format + "' is not nrt-flight-recorder");
  NRT_RETURN_IF_ERROR(read(j, "version", version, "the dump"));
  if (version != FlightRecorderDump::kVersion) {
    return malformed("version " + std::to_string(version) + " is not supported (this build reads version " +
                     std::to_string(FlightRecorderDump::kVersion) + ")");
  }
  FlightRecorderDump dump;
  NRT_RETURN_IF_ERROR(read(j, "rank", dump.rank, "the dump"));
  NRT_RETURN_IF_ERROR(read(j, "world_size", dump.world_size, "the dump"));
  NRT_RETURN_IF_ERROR(read(j, "reason", dump.reason, "the dump"));
  NRT_RETURN_IF_ERROR(read(j, "dump_time_ns", dump.dump_time_ns, "the dump"));
  NRT_RETURN_IF_ERROR(read(j, "recorded", dump.recorded, "the dump"));
  auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_array()) return malformed("missing array 'entries'");
  dump.entries = std::move(records);
  NRT_RETURN_IF_ERROR(check_flight_recorder_dump(dump));

  return dump;
}

Status write_dump_file(const std::string& path, std::span<const uint8_t> bytes) {
  // The project's atomic write: a regular file or a new path only (a FIFO, a device or a
  // directory is refused, its temporary removed); a symbolic link is refused too, so that a dump
  // never lands where the link points. SIGTERM does not remove the temporary: it asks for this
  // same dump (dump_on_signal.h), and a dump under way when it comes must still land. No fsync:
  // on a busy disk it can take a minute, and the job is waiting to end (atomic_file.h).
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    return make_error(ErrorCode::IoWrite, "flight recorder dump " + path + " is a symbolic link; nrt writes dumps only to "
                                              "a regular file or a new path");
  }
  Status written = write_file_atomically(path, bytes, OnSignal::kKeepTemporary, Durability::kSkipFsync);
  if (!written) return make_error(written.error().code, "flight recorder dump: " + written.error().message);
  return Status::Ok();
}

Status write_flight_recorder_dump(const FlightRecorderDump& dump, const std::string& path) {
  const std::string text = to_json(dump);
  return write_dump_file(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

}  // namespace nrt::exec

#include "executor/comm/flight_recorder_torch.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "serializer/pickle_reader.h"
#include "serializer/pickle_writer.h"

namespace nrt::exec {
namespace {

using pickle::Kind;
using pickle::kNoNode;
using pickle::Pickle;
using pickle::PickleWriter;

// nrt's op names and torch's (the profiling name's op, as torch's NCCL flight recorder writes it).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kOps = {{
    {"all_reduce", "all_reduce"},
    {"all_gather_into_tensor", "_all_gather_base"},
    {"reduce_scatter_tensor", "_reduce_scatter_base"},
    {"all_to_all_single", "all_to_all_single"},
    {"broadcast", "broadcast"},
    {"barrier", "barrier"},
}};

// nrt's short dtype names and c10's.
constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kDtypes = {{
    {"f32", "Float"}, {"f64", "Double"}, {"f16", "Half"}, {"bf16", "BFloat16"}, {"i64", "Long"},
    {"i32", "Int"}, {"i16", "Short"}, {"i8", "Char"}, {"u8", "Byte"}, {"b8", "Bool"},
    {"c64", "ComplexFloat"}, {"c128", "ComplexDouble"}, {"u16", "UInt16"}, {"u32", "UInt32"}, {"u64", "UInt64"},
}};

template <size_t N>
std::string_view translate(const std::array<std::pair<std::string_view, std::string_view>, N>& table,
                           std::string_view name, bool to_torch) {
  for (const auto& [nrt, torch] : table) {
    if ((to_torch ? nrt : torch) == name) return to_torch ? torch : nrt;
  }
  return name;  // unknown: kept, and the checks name it
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string t = "[";
  for (size_t i = 0; i < ranks.size(); ++i) t += (i ? ", " : "") + std::to_string(ranks[i]);
  return t + "]";
}

void sizes_list(PickleWriter& w, const std::vector<std::vector<int64_t>>& sizes) {
  w.begin();
  for (const auto& shape : sizes) {
    w.begin();
    for (int64_t extent : shape) w.integer(extent);
    w.end_list();
  }
  w.end_list();
}

void dtypes_list(PickleWriter& w, const std::vector<std::string>& dtypes) {
  w.begin();
  for (const auto& d : dtypes) w.string(translate(kDtypes, d, true));
  w.end_list();
}

void optional_ns(PickleWriter& w, int64_t ns) {
  if (ns > 0) {
    w.integer(ns);
  } else {
    w.none();
  }
}

// The members of a group: recorded, else the whole world for a group as large as it.
std::vector<int> members(const FlightRecorderDump& dump, const CollectiveRecord& r) {
  auto it = dump.groups.find(r.pg_name);
  if (it != dump.groups.end() && static_cast<int>(it->second.size()) == r.pg_size) return it->second;
  std::vector<int> ranks;
  if (r.pg_size == dump.world_size) {
    for (int i = 0; i < dump.world_size; ++i) ranks.push_back(i);
  } else if (r.pg_size == 1) {
    ranks.push_back(dump.rank);
  }
  return ranks;
}

}  // namespace

std::vector<uint8_t> flight_recorder_dump_to_torch(const FlightRecorderDump& dump) {
  // Groups: pg_id by first appearance, members by group.
  std::map<std::string, int> pg_id;
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& r : dump.entries) {
    if (pg_id.emplace(r.pg_name, static_cast<int>(groups.size())).second) groups.emplace_back(r.pg_name, members(dump, r));
  }
  PickleWriter w;
  w.begin();
  w.string("version");
  w.string(kTorchFlightRecorderVersion);
  w.string("comm_lib_version");
  w.string("");
  w.string("pg_config");
  w.begin();
  for (const auto& [name, ranks] : groups) {
    w.string(name);
    w.begin();
    w.string("name");
    w.string(name);
    w.string("desc");
    w.string("undefined");
    w.string("ranks");
    w.string(ranks_text(ranks));
    w.end_dict();
  }
  w.end_dict();
  w.string("pg_status");
  w.begin();
  for (const auto& [name, ranks] : groups) {
    int64_t enqueued = -1, started = -1, completed = -1;
    for (const auto& r : dump.entries) {
      if (r.pg_name != name || r.collective_seq_id == 0) continue;
      enqueued = std::max(enqueued, r.collective_seq_id);
      if (r.state != CollectiveState::kScheduled) started = std::max(started, r.collective_seq_id);
      if (r.state == CollectiveState::kCompleted) completed = std::max(completed, r.collective_seq_id);
    }
    w.string(std::to_string(pg_id[name]));
    w.begin();
    w.string("last_enqueued_collective");
    w.integer(enqueued);
    w.string("last_started_collective");
    w.integer(started);
    w.string("last_completed_collective");
    w.integer(completed);
    w.end_dict();
  }
  w.end_dict();
  w.string("entries");
  w.begin();
  for (const auto& r : dump.entries) {
    w.begin();
    w.string("record_id");
    w.integer(static_cast<int64_t>(r.record_id));
    w.string("pg_id");
    w.integer(pg_id[r.pg_name]);
    w.string("process_group");
    w.begin();
    w.string(r.pg_name);
    w.string("undefined");
    w.end_tuple();
    w.string("collective_seq_id");
    w.integer(r.collective_seq_id);
    w.string("p2p_seq_id");
    w.integer(r.p2p_seq_id);
    w.string("op_id");
    w.integer(r.collective_seq_id > 0 ? r.collective_seq_id : r.p2p_seq_id);
    w.string("profiling_name");
    w.string(r.backend + ":" + std::string(translate(kOps, r.op, true)));
    w.string("time_created_ns");
    w.integer(r.time_created_ns);
    w.string("duration_ms");
    if (r.duration_ms >= 0) {
      w.real(r.duration_ms);
    } else {
      w.none();
    }
    w.string("input_sizes");
    sizes_list(w, r.input_sizes);
    w.string("input_dtypes");
    dtypes_list(w, r.input_dtypes);
    w.string("output_sizes");
    sizes_list(w, r.output_sizes);
    w.string("output_dtypes");
    dtypes_list(w, r.output_dtypes);
    w.string("state");
    w.string(r.state == CollectiveState::kFailed ? "started" : collective_state_name(r.state));
    w.string("time_discovered_started_ns");
    optional_ns(w, r.time_started_ns);
    w.string("time_discovered_completed_ns");
    optional_ns(w, r.time_completed_ns);
    w.string("retired");
    w.boolean(r.state == CollectiveState::kCompleted || r.state == CollectiveState::kFailed);
    w.string("timeout_ms");
    w.integer(r.timeout_ms);
    w.string("is_p2p");
    w.boolean(r.p2p_seq_id > 0);
    w.string("frames");
    w.begin();
    if (!r.node.empty()) {
      w.begin();
      w.string("name");
      w.string(r.node);
      w.string("filename");
      w.string("<nrt program node>");
      w.string("line");
      w.integer(0);
      w.end_dict();
    }
    w.end_list();
    w.string("nrt_node");
    w.string(r.node);
    w.string("nrt_state");
    w.string(collective_state_name(r.state));
    w.string("nrt_error");
    w.string(r.error);
    w.end_dict();
  }
  w.end_list();
  w.string("nrt_rank");
  w.integer(dump.rank);
  w.string("nrt_world_size");
  w.integer(dump.world_size);
  w.string("nrt_reason");
  w.string(dump.reason);
  w.string("nrt_dump_time_ns");
  w.integer(dump.dump_time_ns);
  w.string("nrt_recorded");
  w.integer(static_cast<int64_t>(dump.recorded));
  w.end_dict();
  return w.finish();
}

namespace {

class TorchDumpReader {
 public:
  TorchDumpReader(const Pickle& p, int rank, const std::string& what) : p_(p), rank_(rank), what_(what) {}

  Result<FlightRecorderDump> read() {
    const uint32_t root = p_.root();
    if (p_.node(root).kind != Kind::kDict) return bad("the dump is not a dict");
    NRT_TRY(version, string_field(root, "version", "the dump"));
    if (version->empty() || version->size() > 16) return bad("version '" + *version + "'");
    NRT_TRY(config, field(root, "pg_config", "the dump"));
    NRT_RETURN_IF_ERROR(read_groups(*config));
    FlightRecorderDump dump;
    dump.rank = rank_;
    int world = rank_ + 1;
    for (const auto& [name, ranks] : groups_) {
      for (int r : ranks) world = std::max(world, r + 1);
      dump.groups[name] = ranks;
    }
    dump.world_size = world;
    if (auto w = optional_int(root, "nrt_world_size")) dump.world_size = static_cast<int>(std::clamp<int64_t>(*w, 0, INT32_MAX));
    if (auto r = optional_int(root, "nrt_rank"); r && *r != rank_) {
      return bad("the dump says rank " + std::to_string(*r) + " but its file name says " + std::to_string(rank_));
    }
    if (auto reason = p_.dict_get(root, "nrt_reason")) {
      if (auto text = p_.as_string(*reason)) dump.reason = *text;
    }
    if (auto t = optional_int(root, "nrt_dump_time_ns")) dump.dump_time_ns = *t;
    NRT_TRY(entries, field(root, "entries", "the dump"));
    auto items = p_.as_sequence(*entries);
    if (!items) return bad("'entries' is not a list");
    for (size_t i = 0; i < items->size(); ++i) {
      NRT_TRY(record, entry((*items)[i], i));
      dump.entries.push_back(std::move(*record));
    }
    dump.recorded = dump.entries.size();
    if (auto recorded = optional_int(root, "nrt_recorded"); recorded && *recorded >= 0) {
      dump.recorded = static_cast<uint64_t>(*recorded);
    }
    NRT_RETURN_IF_ERROR(check_flight_recorder_dump(dump));
    return dump;
  }

 private:
  Error bad(const std::string& why) const { return make_error(ErrorCode::InvalidArgument, what_ + ": " + why); }

  Result<uint32_t> field(uint32_t dict, const char* key, const std::string& where) const {
    auto v = p_.dict_get(dict, key);
    if (!v) return bad(where + " has no '" + key + "'");
    return *v;
  }
  Result<std::string> string_field(uint32_t dict, const char* key, const std::string& where) const {
    NRT_TRY(v, field(dict, key, where));
    auto text = p_.as_string(*v);
    if (!text) return bad(where + ": '" + key + "' is not a string");
    return std::string(*text);
  }
  Result<int64_t> int_field(uint32_t dict, const char* key, const std::string& where) const {
    NRT_TRY(v, field(dict, key, where));
    auto n = p_.as_int(*v);
    if (!n || p_.node(*v).kind != Kind::kInt) return bad(where + ": '" + key + "' is not an int");
    return *n;
  }
  std::optional<int64_t> optional_int(uint32_t dict, const char* key) const {
    auto v = p_.dict_get(dict, key);
    if (!v || p_.node(*v).kind != Kind::kInt) return std::nullopt;
    return p_.node(*v).integer;
  }

  // pg_config: {name: {"name", "desc", "ranks": "[0, 1]"}}; ranks as torch writes them, a string.
  Status read_groups(uint32_t config) {
    const auto& node = p_.node(config);
    if (node.kind != Kind::kDict) return bad("'pg_config' is not a dict");
    for (size_t i = 0; i + 1 < node.items.size(); i += 2) {
      auto name = p_.as_string(node.items[i]);
      if (!name) return bad("a pg_config key is not a string");
      const std::string where = "pg_config '" + std::string(name->substr(0, 64)) + "'";
      NRT_TRY(text, string_field(node.items[i + 1], "ranks", where));
      std::vector<int> ranks;
      int64_t current = -1;
      for (char c : *text) {
        if (c >= '0' && c <= '9') {
          current = (current < 0 ? 0 : current * 10) + (c - '0');
          if (current >= (int64_t{1} << 20)) return bad(where + ": a rank of 2^20 or more");
        } else if (c == ',' || c == ']') {
          if (current >= 0) ranks.push_back(static_cast<int>(current));
          current = -1;
        } else if (c != '[' && c != ' ') {
          return bad(where + ": ranks '" + text->substr(0, 64) + "' is not a list of ranks");
        }
        if (ranks.size() > (size_t{1} << 20)) return bad(where + ": more than 2^20 ranks");
      }
      if (ranks.empty() || std::set<int>(ranks.begin(), ranks.end()).size() != ranks.size()) {
        return bad(where + ": ranks '" + text->substr(0, 64) + "' are empty or repeated");
      }
      groups_[std::string(*name)] = std::move(ranks);
    }
    return {};
  }

  Result<std::vector<std::vector<int64_t>>> sizes(uint32_t e, const char* key, const std::string& where) const {
    NRT_TRY(v, field(e, key, where));
    auto list = p_.as_sequence(*v);
    if (!list) return bad(where + ": '" + key + "' is not a list");
    std::vector<std::vector<int64_t>> out;
    for (uint32_t shape : *list) {
      auto dims = p_.as_sequence(shape);
      if (!dims) return bad(where + ": '" + key + "' holds a shape that is not a list");
      out.emplace_back();
      for (uint32_t d : *dims) {
        auto extent = p_.as_int(d);
        if (!extent) return bad(where + ": '" + key + "' holds a size that is not an int");
        out.back().push_back(*extent);
      }
    }
    return out;
  }

  Result<std::vector<std::string>> dtypes(uint32_t e, const char* key, const std::string& where) const {
    NRT_TRY(v, field(e, key, where));
    auto list = p_.as_sequence(*v);
    if (!list) return bad(where + ": '" + key + "' is not a list");
    std::vector<std::string> out;
    for (uint32_t d : *list) {
      auto name = p_.as_string(d);
      if (!name) return bad(where + ": '" + key + "' holds a dtype that is not a string");
      out.emplace_back(translate(kDtypes, *name, false));
    }
    return out;
  }

  Result<CollectiveRecord> entry(uint32_t e, size_t index) const {
    const std::string where = "entry " + std::to_string(index);
    if (p_.node(e).kind != Kind::kDict) return bad(where + " is not a dict");
    CollectiveRecord r;
    NRT_TRY(record_id, int_field(e, "record_id", where));
    r.record_id = static_cast<uint64_t>(std::max<int64_t>(*record_id, 0));
    NRT_TRY(group, field(e, "process_group", where));
    auto pair = p_.as_sequence(*group);
    auto name = pair && !pair->empty() ? p_.as_string((*pair)[0]) : std::nullopt;
    if (!name) return bad(where + ": 'process_group' is not (name, desc)");
    r.pg_name = *name;
    auto members = groups_.find(r.pg_name);
    if (members == groups_.end()) return bad(where + ": process group '" + r.pg_name.substr(0, 64) + "' is not in pg_config");
    r.pg_size = static_cast<int>(members->second.size());
    auto at = std::find(members->second.begin(), members->second.end(), rank_);
    if (at == members->second.end()) {
      return bad(where + ": rank " + std::to_string(rank_) + " is not a member of process group '" + r.pg_name.substr(0, 64) + "'");
    }
    r.pg_rank = static_cast<int>(at - members->second.begin());
    NRT_TRY(seq, int_field(e, "collective_seq_id", where));
    r.collective_seq_id = *seq;
    NRT_TRY(p2p, int_field(e, "p2p_seq_id", where));
    r.p2p_seq_id = *p2p;
    NRT_TRY(profiling, string_field(e, "profiling_name", where));
    const size_t colon = profiling->rfind(':');
    if (colon == std::string::npos) return bad(where + ": profiling name '" + profiling->substr(0, 64) + "' is not '<backend>:<op>'");
    r.backend = profiling->substr(0, colon);
    r.op = std::string(translate(kOps, std::string_view(*profiling).substr(colon + 1), false));
    NRT_TRY(created, int_field(e, "time_created_ns", where));
    r.time_created_ns = *created;
    if (auto started = optional_int(e, "time_discovered_started_ns")) r.time_started_ns = *started;
    if (auto completed = optional_int(e, "time_discovered_completed_ns")) r.time_completed_ns = *completed;
    if (auto d = p_.dict_get(e, "duration_ms")) {
      const auto& n = p_.node(*d);
      if (n.kind == Kind::kFloat) r.duration_ms = n.real;
      if (n.kind == Kind::kInt) r.duration_ms = static_cast<double>(n.integer);
    }
    if (auto timeout = optional_int(e, "timeout_ms")) r.timeout_ms = *timeout;
    NRT_TRY(in_sizes, sizes(e, "input_sizes", where));
    r.input_sizes = std::move(*in_sizes);
    NRT_TRY(out_sizes, sizes(e, "output_sizes", where));
    r.output_sizes = std::move(*out_sizes);
    NRT_TRY(in_dtypes, dtypes(e, "input_dtypes", where));
    r.input_dtypes = std::move(*in_dtypes);
    NRT_TRY(out_dtypes, dtypes(e, "output_dtypes", where));
    r.output_dtypes = std::move(*out_dtypes);
    // nrt's own state where it wrote one (a failure is "started" for torch), else torch's.
    std::string state;
    if (auto nrt_state = p_.dict_get(e, "nrt_state"); nrt_state && p_.as_string(*nrt_state)) {
      state = std::string(*p_.as_string(*nrt_state));
    } else {
      NRT_TRY(torch_state, string_field(e, "state", where));
      state = *torch_state;
    }
    bool known = false;
    for (auto s : {CollectiveState::kScheduled, CollectiveState::kStarted, CollectiveState::kCompleted, CollectiveState::kFailed}) {
      if (state == collective_state_name(s)) {
        r.state = s;
        known = true;
      }
    }
    if (!known) return bad(where + ": unknown state '" + state.substr(0, 32) + "'");
    if (auto node = p_.dict_get(e, "nrt_node"); node && p_.as_string(*node)) r.node = *p_.as_string(*node);
    if (auto error = p_.dict_get(e, "nrt_error"); error && p_.as_string(*error)) r.error = *p_.as_string(*error);
    return r;
  }

  const Pickle& p_;
  int rank_;
  const std::string& what_;
  std::map<std::string, std::vector<int>> groups_;
};

}  // namespace

Result<FlightRecorderDump> flight_recorder_dump_from_torch(std::span<const uint8_t> bytes, int rank,
                                                           const std::string& what) {
  if (rank < 0 || rank >= (1 << 20)) return make_error(ErrorCode::InvalidArgument, what + ": rank " + std::to_string(rank));
  NRT_TRY(tree, pickle::read_pickle(bytes, {}, what));
  return TorchDumpReader(*tree, rank, what).read();
}

Status write_torch_flight_recorder_dump(const FlightRecorderDump& dump, const std::string& path) {
  const auto bytes = flight_recorder_dump_to_torch(dump);
  return write_dump_file(path, bytes);
}

}  // namespace nrt::exec

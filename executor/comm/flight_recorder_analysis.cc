#include "executor/comm/flight_recorder_analysis.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "serializer/program_text.h"

namespace nrt::exec {
namespace {

// Huge findings are summarized: the text shows the first ones and how many more; JSON lists more.
constexpr size_t kFindingsShown = 20;
constexpr size_t kFindingsListed = 1000;

// "[0, 2]"; past 32 ranks the first 32 and how many more.
std::string rank_list_text(const std::vector<int>& ranks) {
  constexpr size_t kShown = 32;
  std::string out = "[";
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kShown) out += ", and " + std::to_string(ranks.size() - kShown) + " more";
  return out + "]";
}

std::string shapes_text(const std::vector<std::vector<int64_t>>& shapes, const std::vector<std::string>& dtypes) {
  std::string out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    out += (i ? ", " : "") + (i < dtypes.size() ? dtypes[i] : std::string("?")) + "[";
    for (size_t d = 0; d < shapes[i].size(); ++d) out += (d ? "," : "") + std::to_string(shapes[i][d]);
    out += "]";
  }
  return out;
}

// Ranks grouped by a property of their record: the largest class is taken as the norm.
template <typename Key>
std::vector<std::pair<Key, std::vector<int>>> classes(const std::map<int, const CollectiveRecord*>& by_rank,
                                                      Key (*key)(const CollectiveRecord&)) {
  std::map<Key, std::vector<int>> grouped;
  for (const auto& [rank, record] : by_rank) grouped[key(*record)].push_back(rank);
  std::vector<std::pair<Key, std::vector<int>>> out(grouped.begin(), grouped.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  return out;
}

std::string op_key(const CollectiveRecord& r) { return r.op; }
std::string size_key(const CollectiveRecord& r) { return shapes_text(r.input_sizes, {}) + "->" + shapes_text(r.output_sizes, {}); }
std::string dtype_key(const CollectiveRecord& r) {
  std::string out;
  for (const auto& d : r.input_dtypes) out += d + ",";
  out += "->";
  for (const auto& d : r.output_dtypes) out += d + ",";
  return out;
}

}  // namespace

Result<FlightRecorderAnalysis> analyze_flight_recorder(const std::vector<FlightRecorderDump>& dumps) {
  FlightRecorderAnalysis analysis;
  if (dumps.empty()) return make_error(ErrorCode::InvalidArgument, "fr-analyze needs at least one dump");
  std::map<int, const FlightRecorderDump*> by_rank;
  analysis.world_size = dumps.front().world_size;
  for (const auto& dump : dumps) {
    if (dump.world_size != analysis.world_size) {
      return make_error(ErrorCode::InvalidArgument, "the dumps disagree on the world size (" +
                                                        std::to_string(analysis.world_size) + " and " +
                                                        std::to_string(dump.world_size) + "): not one job");
    }
    if (!by_rank.emplace(dump.rank, &dump).second) {
      return make_error(ErrorCode::InvalidArgument, "two dumps of rank " + std::to_string(dump.rank));
    }
    analysis.ranks.push_back(dump.rank);
  }
  std::sort(analysis.ranks.begin(), analysis.ranks.end());

  std::vector<int> without_dump;
  for (int r = 0; r < analysis.world_size; ++r) {
    if (!by_rank.count(r)) without_dump.push_back(r);
  }
  if (!without_dump.empty()) {
    FlightRecorderFinding f;
    f.kind = "missing_dump";
    f.ranks = without_dump;
    f.others = analysis.ranks;
    f.message = "ranks " + rank_list_text(without_dump) + " left no dump (killed, or never started)";
    analysis.findings.push_back(std::move(f));
  }

  // group -> seq -> rank -> record, and per group and rank the window of seqs still in its ring.
  struct GroupState {
    int size = 0;
    std::map<int64_t, std::map<int, const CollectiveRecord*>> by_seq;
    std::map<int, std::pair<int64_t, int64_t>> window;  // rank -> (first, last) seq recorded
    std::map<int, std::pair<int, int>> member;          // rank -> (group size, group rank) it recorded
    int64_t incomplete = 0;
  };
  std::map<std::string, GroupState> groups;
  size_t compared = 0;  // collective entries held by the dumps
  for (const auto& [rank, dump] : by_rank) {
    for (const auto& r : dump->entries) {
      if (r.collective_seq_id <= 0) continue;
      ++compared;
      GroupState& g = groups[r.pg_name];
      g.size = std::max(g.size, r.pg_size);
      g.member.emplace(rank, std::make_pair(r.pg_size, r.pg_rank));
      g.by_seq[r.collective_seq_id][rank] = &r;
      auto [it, added] = g.window.emplace(rank, std::make_pair(r.collective_seq_id, r.collective_seq_id));
      if (!added) {
        it->second.first = std::min(it->second.first, r.collective_seq_id);
        it->second.second = std::max(it->second.second, r.collective_seq_id);
      }
      if (r.state != CollectiveState::kCompleted) ++g.incomplete;
    }
  }

  // Nothing to compare is no verdict: say what is missing.
  if (compared == 0) {
    std::vector<int> kept_none;  // recorded collectives, dumped none (NRT_FR_BUFFER_SIZE=0)
    for (const auto& [rank, dump] : by_rank) {
      if (dump->recorded > 0) kept_none.push_back(rank);
    }
    FlightRecorderFinding f;
    f.kind = "nothing_recorded";
    f.ranks = analysis.ranks;
    f.message = kept_none.empty()
                    ? "the dumps hold no collective: nothing to compare (no rank recorded one)"
                    : "the dumps hold no collective: nothing to compare (ranks " + rank_list_text(kept_none) +
                          " recorded collectives but kept none: NRT_FR_BUFFER_SIZE=0?)";
    analysis.findings.push_back(std::move(f));
  }

  std::vector<std::pair<int64_t, FlightRecorderFinding>> timed;  // (time created, finding)
  for (const auto& group_entry : groups) {
    const std::string& name = group_entry.first;  // not structured bindings: lambdas below capture them
    const GroupState& g = group_entry.second;
    // The ranks must describe one group: one size, distinct group ranks, no more members than it holds.
    {
      std::map<int, std::vector<int>> by_size, by_group_rank;
      for (const auto& [rank, described] : g.member) {
        by_size[described.first].push_back(rank);
        by_group_rank[described.second].push_back(rank);
      }
      std::string contradiction;
      std::vector<int> at_fault;
      if (by_size.size() > 1) {
        for (const auto& [size, ranks] : by_size) {
          contradiction += (contradiction.empty() ? "" : ", ") + std::string("size ") + std::to_string(size) +
                           " on ranks " + rank_list_text(ranks);
        }
        at_fault = by_size.rbegin()->second;
      } else {
        for (const auto& [group_rank, ranks] : by_group_rank) {
          if (ranks.size() < 2) continue;
          contradiction = "ranks " + rank_list_text(ranks) + " all claim group rank " + std::to_string(group_rank);
          at_fault = ranks;
          break;
        }
        if (contradiction.empty() && static_cast<int>(g.member.size()) > g.size) {
          contradiction = std::to_string(g.member.size()) + " ranks recorded it, but it holds " + std::to_string(g.size);
          for (const auto& [rank, described] : g.member) at_fault.push_back(rank);
        }
      }
      if (!contradiction.empty()) {
        FlightRecorderFinding f;
        f.kind = "inconsistent_group";
        f.group = name;
        f.ranks = at_fault;
        f.message = "process group '" + printable(name) + "' is described inconsistently: " + contradiction;
        analysis.findings.push_back(std::move(f));
        continue;
      }
    }
    FlightRecorderGroupSummary summary{name, g.size, {}, g.incomplete};
    // Members: ranks that recorded the group; every dumped rank when it spans the world.
    std::set<int> members;
    for (const auto& [rank, window] : g.window) members.insert(rank);
    if (g.size == analysis.world_size) members.insert(analysis.ranks.begin(), analysis.ranks.end());
    int64_t oldest_common = 1;  // seqs below it fell out of some member's ring
    for (int rank : members) {
      auto it = g.window.find(rank);
      summary.last_seq.emplace_back(rank, it == g.window.end() ? 0 : it->second.second);
      if (it != g.window.end() && by_rank.at(rank)->recorded > by_rank.at(rank)->entries.size()) {
        oldest_common = std::max(oldest_common, it->second.first);
      }
    }
    analysis.groups.push_back(std::move(summary));
    for (const auto& seq_entry : g.by_seq) {
      const int64_t seq = seq_entry.first;
      const auto& records = seq_entry.second;
      if (seq < oldest_common) continue;
      const CollectiveRecord& first = *records.begin()->second;
      auto finding = [&](const char* kind, std::vector<int> ranks, std::vector<int> others, std::string what) {
        FlightRecorderFinding f;
        f.kind = kind;
        f.group = name;
        f.seq = seq;
        f.op = first.op;
        f.node = first.node;
        f.ranks = std::move(ranks);
        f.others = std::move(others);
        f.message = std::move(what);
        timed.emplace_back(first.time_created_ns, std::move(f));
      };
      std::vector<int> absent, present;
      for (int rank : members) (records.count(rank) ? present : absent).push_back(rank);
      if (!absent.empty()) {
        std::vector<int> waiting;  // entered and never saw it complete
        for (const auto& [rank, r] : records) {
          if (r->state != CollectiveState::kCompleted) waiting.push_back(rank);
        }
        const std::string state = waiting.empty() ? "" : "; it never completed on ranks " + rank_list_text(waiting);
        finding("not_entered", absent, present,
                "ranks " + rank_list_text(absent) + " never entered " + first.op + " SeqNum=" + std::to_string(seq) +
                    " of process group '" + printable(name) + "'" +
                    (first.node.empty() ? "" : " (node '" + printable(first.node) + "')") +
                    ", which ranks " + rank_list_text(present) + " entered" + state);
        continue;
      }
      auto by_op = classes<std::string>(records, op_key);
      if (by_op.size() > 1) {
        std::vector<int> minority;
        std::string ops;
        for (size_t c = 1; c < by_op.size(); ++c) {
          minority.insert(minority.end(), by_op[c].second.begin(), by_op[c].second.end());
          ops += (c > 1 ? ", " : "") + by_op[c].first;
        }
        finding("op_mismatch", minority, by_op[0].second,
                "SeqNum=" + std::to_string(seq) + " of process group '" + printable(name) + "': ranks " + rank_list_text(minority) +
                    " issued " + ops + " where ranks " + rank_list_text(by_op[0].second) + " issued " + by_op[0].first);
        continue;
      }
      using KeyFn = std::string (*)(const CollectiveRecord&);
      const std::pair<const char*, KeyFn> kKeys[] = {{"size_mismatch", size_key}, {"dtype_mismatch", dtype_key}};
      for (auto [kind, key] : kKeys) {
        auto by_key = classes<std::string>(records, key);
        if (by_key.size() < 2) continue;
        std::vector<int> minority;
        for (size_t c = 1; c < by_key.size(); ++c) minority.insert(minority.end(), by_key[c].second.begin(), by_key[c].second.end());
        const CollectiveRecord& norm = *records.at(by_key[0].second.front());
        const CollectiveRecord& odd = *records.at(minority.front());
        finding(kind, minority, by_key[0].second,
                first.op + " SeqNum=" + std::to_string(seq) + " of process group '" + printable(name) + "': ranks " +
                    rank_list_text(minority) + " sent " + shapes_text(odd.input_sizes, odd.input_dtypes) + " -> " +
                    shapes_text(odd.output_sizes, odd.output_dtypes) + " where ranks " + rank_list_text(by_key[0].second) +
                    " sent " + shapes_text(norm.input_sizes, norm.input_dtypes) + " -> " +
                    shapes_text(norm.output_sizes, norm.output_dtypes));
        break;
      }
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [time, f] : timed) analysis.findings.push_back(std::move(f));
  return analysis;
}

std::string analysis_json(const FlightRecorderAnalysis& a) {
  using Json = nlohmann::json;
  Json groups = Json::array();
  for (const auto& g : a.groups) {
    Json last = Json::object();
    for (const auto& [rank, seq] : g.last_seq) last[std::to_string(rank)] = seq;
    groups.push_back({{"name", g.name}, {"size", g.size}, {"last_seq", last}, {"incomplete", g.incomplete}});
  }
  Json findings = Json::array();
  for (size_t i = 0; i < a.findings.size() && i < kFindingsListed; ++i) {
    const auto& f = a.findings[i];
    findings.push_back({{"kind", f.kind}, {"group", f.group}, {"seq", f.seq}, {"op", f.op}, {"node", f.node},
                        {"ranks", f.ranks}, {"others", f.others}, {"message", f.message}});
  }
  Json j{{"agree", a.agree()},
         {"world_size", a.world_size},
         {"ranks", a.ranks},
         {"groups", groups},
         {"findings", findings},
         {"findings_omitted", a.findings.size() > kFindingsListed ? a.findings.size() - kFindingsListed : 0},
         {"first_mismatch", a.findings.empty() ? Json(nullptr) : Json(a.findings.front().message)}};
  return j.dump(2) + "\n";
}

std::string analysis_text(const FlightRecorderAnalysis& a) {
  std::string out = "dumps of ranks " + rank_list_text(a.ranks) + " (world size " + std::to_string(a.world_size) + ")\n";
  for (const auto& g : a.groups) {
    out += "  group '" + g.name + "' (size " + std::to_string(g.size) + "): last SeqNum";
    for (const auto& [rank, seq] : g.last_seq) out += " rank " + std::to_string(rank) + "=" + std::to_string(seq);
    out += ", " + std::to_string(g.incomplete) + " not completed\n";
  }
  if (a.agree()) return out + "the dumps agree\n";
  out += "first mismatch: " + a.findings.front().message + "\n";
  const size_t shown = std::min(a.findings.size(), kFindingsShown);
  for (size_t i = 1; i < shown; ++i) out += "  then: " + a.findings[i].message + "\n";
  if (shown < a.findings.size()) out += "  and " + std::to_string(a.findings.size() - shown) + " more\n";
  return out;
}

}  // namespace nrt::exec

#include "executor/runtime/run_profile.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

namespace nrt::exec {

void RunProfile::begin_run() {
  if (runs_ == 0) origin_ = std::chrono::steady_clock::now();
  ++runs_;
}

void RunProfile::record(uint32_t node, std::chrono::steady_clock::time_point start,
                        std::chrono::steady_clock::time_point end, std::string shapes) {
  NodeTiming timing;
  timing.run = runs_ == 0 ? 0 : runs_ - 1;
  timing.node = node;
  timing.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(start - origin_).count();
  timing.duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
  timing.shapes = std::move(shapes);
  timings_.push_back(std::move(timing));
}

namespace {

template <class Key>
std::vector<ProfileRow> aggregate(const RunProfile& profile, const ExecutionPlan& plan, Key key) {
  std::map<std::string, ProfileRow> rows;
  double total = 0;
  for (const NodeTiming& t : profile.timings()) {
    const PlannedNode& node = plan.nodes[t.node];
    auto [it, inserted] = rows.try_emplace(key(node));
    ProfileRow& row = it->second;
    if (inserted) {
      row.name = it->first;
      row.target = node.target;
    }
    row.count += 1;
    row.total_ms += static_cast<double>(t.duration_ns) / 1e6;
    total += static_cast<double>(t.duration_ns) / 1e6;
  }
  std::vector<ProfileRow> out;
  for (auto& [name, row] : rows) {
    row.mean_ms = row.total_ms / static_cast<double>(row.count);
    row.share = total > 0 ? row.total_ms / total : 0;
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.total_ms > b.total_ms; });
  return out;
}

}  // namespace

std::vector<ProfileRow> profile_by_target(const RunProfile& profile, const ExecutionPlan& plan) {
  return aggregate(profile, plan, [](const PlannedNode& node) { return node.target; });
}

std::vector<ProfileRow> profile_by_node(const RunProfile& profile, const ExecutionPlan& plan) {
  return aggregate(profile, plan, [](const PlannedNode& node) { return node.name; });
}

std::string chrome_trace_json(const RunProfile& profile, const ExecutionPlan& plan, int rank) {
  nlohmann::json events = nlohmann::json::array();
  const uint32_t last = profile.runs() == 0 ? 0 : profile.runs() - 1;
  for (const NodeTiming& t : profile.timings()) {
    if (t.run != last) continue;
    const PlannedNode& node = plan.nodes[t.node];
    nlohmann::json args = {{"node", node.name}, {"index", node.node_index}};
    if (!t.shapes.empty()) args["shapes"] = t.shapes;
    // Trace-event times are microseconds; fractions keep sub-microsecond nodes visible.
    events.push_back({{"name", node.target},
                      {"cat", "node"},
                      {"ph", "X"},
                      {"ts", static_cast<double>(t.start_ns) / 1e3},
                      {"dur", static_cast<double>(t.duration_ns) / 1e3},
                      {"pid", rank},
                      {"tid", 0},
                      {"args", std::move(args)}});
  }
  nlohmann::json trace = {{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ms"},
                          {"otherData", {{"graph", plan.graph_name}, {"runs", profile.runs()}}}};
  return trace.dump(1);
}

}  // namespace nrt::exec

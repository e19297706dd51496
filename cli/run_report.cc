#include "cli/run_report.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <nlohmann/json.hpp>

namespace nrt::cli {
namespace {

using json = nlohmann::json;

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string dump(json& j, std::optional<RankInfo> rank) {
  if (!rank) return j.dump(2);
  j["rank"] = rank->rank;
  j["world_size"] = rank->world_size;
  return j.dump();
}

std::string percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buffer;
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", v);
  return buffer;
}

const char* signal_name(int number) {
  switch (number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

}  // namespace

void print_run_text(const RunReport& report, std::FILE* out) {
  std::fprintf(out, "program: %s, graph '%s' on %s\n", report.file.c_str(), report.graph.c_str(), report.device.c_str());
  if (report.world_size > 1) std::fprintf(out, "ranks: %d (this report is rank 0's)\n", report.world_size);
  const auto [min, max] = std::minmax_element(report.times_ms.begin(), report.times_ms.end());
  std::fprintf(out, "time: median %.4f ms over %zu run%s", report.median_ms(), report.times_ms.size(),
               report.times_ms.size() == 1 ? "" : "s");
  if (report.times_ms.size() > 1) std::fprintf(out, " (min %.4f, max %.4f)", *min, *max);
  if (report.warmup > 0) std::fprintf(out, ", after %d warm-up run%s", report.warmup, report.warmup == 1 ? "" : "s");
  std::fprintf(out, "\n");
  if (report.interrupted_by != 0) {
    std::fprintf(out, "interrupted: %s after %zu of %d runs; no output was written or compared\n",
                 signal_name(report.interrupted_by), report.times_ms.size(), report.repeat);
  }
  std::fprintf(out, "memory: arena %llu bytes planned, naive sum %llu bytes (%s), live peak %llu bytes\n",
               static_cast<unsigned long long>(report.arena_bytes), static_cast<unsigned long long>(report.naive_bytes),
               percent(report.arena_bytes, report.naive_bytes).c_str(),
               static_cast<unsigned long long>(report.live_peak_bytes));
  if (!report.collectives.empty()) {
    int64_t count = 0, bytes = 0;
    std::string ops;
    for (const auto& c : report.collectives) {
      count += c.count;
      bytes += c.bytes_sent;
      ops += (ops.empty() ? "" : ", ") + c.op + " x" + std::to_string(c.count);
    }
    std::fprintf(out, "communication: %lld collective%s, %lld bytes sent by this rank (%s)\n",
                 static_cast<long long>(count), count == 1 ? "" : "s", static_cast<long long>(bytes), ops.c_str());
  }
  for (const auto& o : report.outputs) {
    std::fprintf(out, "output %s: %s", o.name.c_str(), o.type.c_str());
    if (!o.path.empty()) std::fprintf(out, " -> %s", o.path.c_str());
    std::fprintf(out, "\n");
    if (!o.comparison) continue;
    const auto& c = *o.comparison;
    if (!c.problem.empty()) {
      std::fprintf(out, "  MISMATCH against %s: %s\n", o.expected.c_str(), c.problem.c_str());
    } else if (c.ok) {
      std::fprintf(out, "  matches %s (max abs error %s, max rel error %s)\n", o.expected.c_str(),
                   number(c.max_abs_error).c_str(), number(c.max_rel_error).c_str());
    } else {
      std::fprintf(out, "  MISMATCH against %s: %lld of %lld elements beyond atol %g and rtol %g\n", o.expected.c_str(),
                   static_cast<long long>(c.num_mismatched), static_cast<long long>(c.num_elements), report.atol,
                   report.rtol);
      std::fprintf(out, "  worst element %s: got %s, expected %s, abs error %s, rel error %s\n",
                   exec::index_text(c.worst_index).c_str(), c.worst_got.c_str(), c.worst_expected.c_str(),
                   number(c.worst_abs_error).c_str(), number(c.worst_rel_error).c_str());
    }
  }
  print_profile_text(report, out);
}

namespace {

// The rows of one profile table; the per-node table shows the slowest `limit` nodes.
void print_profile_table(const char* title, const std::vector<exec::ProfileRow>& rows, bool with_target, size_t limit,
                         std::FILE* out) {
  size_t width = 6;
  for (size_t i = 0; i < rows.size() && i < limit; ++i) width = std::max(width, rows[i].name.size());
  std::fprintf(out, "%s\n  %-*s %8s %12s %12s %7s%s\n", title, static_cast<int>(width), with_target ? "node" : "target",
               "count", "total ms", "mean ms", "share", with_target ? "  target" : "");
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const auto& r = rows[i];
    std::fprintf(out, "  %-*s %8llu %12.4f %12.5f %6.1f%%%s%s\n", static_cast<int>(width), r.name.c_str(),
                 static_cast<unsigned long long>(r.count), r.total_ms, r.mean_ms, 100.0 * r.share,
                 with_target ? "  " : "", with_target ? r.target.c_str() : "");
  }
  if (rows.size() > limit) std::fprintf(out, "  ... %zu more nodes\n", rows.size() - limit);
}

json profile_json(const std::vector<exec::ProfileRow>& rows) {
  json out = json::array();
  for (const auto& r : rows) {
    out.push_back({{"name", r.name}, {"target", r.target}, {"count", r.count}, {"total_ms", r.total_ms},
                   {"mean_ms", r.mean_ms}, {"share", r.share}});
  }
  return out;
}

}  // namespace

void print_profile_text(const RunReport& report, std::FILE* out) {
  if (report.profile_targets) print_profile_table("profile by op target:", *report.profile_targets, false, SIZE_MAX, out);
  if (report.profile_nodes) print_profile_table("profile by node (slowest 20):", *report.profile_nodes, true, 20, out);
}

std::string run_json(const RunReport& report, int exit_code, std::optional<RankInfo> rank) {
  json j;
  j["ok"] = exit_code == 0;
  j["exit_code"] = exit_code;
  j["file"] = report.file;
  j["graph"] = report.graph;
  j["device"] = report.device;
  j["runs"] = report.times_ms.size();
  j["repeat"] = report.repeat;
  j["warmup"] = report.warmup;
  j["interrupted_by"] = report.interrupted_by == 0 ? json(nullptr) : json(signal_name(report.interrupted_by));
  const auto [min, max] = std::minmax_element(report.times_ms.begin(), report.times_ms.end());
  j["time_ms"] = {{"median", report.median_ms()},
                  {"min", report.times_ms.empty() ? 0.0 : *min},
                  {"max", report.times_ms.empty() ? 0.0 : *max},
                  {"all", report.times_ms}};
  j["memory"] = {{"arena_bytes", report.arena_bytes},
                 {"naive_bytes", report.naive_bytes},
                 {"live_peak_bytes", report.live_peak_bytes}};
  json collectives = json::array();
  int64_t bytes_sent = 0;
  for (const auto& c : report.collectives) {
    collectives.push_back({{"op", c.op}, {"group", c.group}, {"count", c.count}, {"bytes_sent", c.bytes_sent}});
    bytes_sent += c.bytes_sent;
  }
  j["communication"] = {{"bytes_sent", bytes_sent}, {"collectives", collectives}};
  j["tolerance"] = {{"atol", report.atol}, {"rtol", report.rtol}};
  json outputs = json::array();
  for (const auto& o : report.outputs) {
    json entry = {{"name", o.name}, {"type", o.type}};
    entry["path"] = o.path.empty() ? json(nullptr) : json(o.path);
    if (o.comparison) {
      const auto& c = *o.comparison;
      json comparison = {{"expected", o.expected},
                         {"ok", c.ok},
                         {"elements", c.num_elements},
                         {"mismatched", c.num_mismatched},
                         {"max_abs_error", finite_or_null(c.max_abs_error)},
                         {"max_rel_error", finite_or_null(c.max_rel_error)}};
      comparison["problem"] = c.problem.empty() ? json(nullptr) : json(c.problem);
      if (c.has_worst) {
        comparison["worst"] = {{"index", c.worst_index},
                               {"got", c.worst_got},
                               {"expected", c.worst_expected},
                               {"abs_error", finite_or_null(c.worst_abs_error)},
                               {"rel_error", finite_or_null(c.worst_rel_error)}};
      } else {
        comparison["worst"] = nullptr;
      }
      entry["comparison"] = std::move(comparison);
    } else {
      entry["comparison"] = nullptr;
    }
    outputs.push_back(std::move(entry));
  }
  j["outputs"] = std::move(outputs);
  if (report.profile_targets && report.profile_nodes) {
    j["profile"] = {{"by_target", profile_json(*report.profile_targets)}, {"by_node", profile_json(*report.profile_nodes)}};
  }
  return dump(j, rank);
}

std::string error_json(const Error& error, int exit_code, std::optional<RankInfo> rank) {
  json j;
  j["ok"] = false;
  j["exit_code"] = exit_code;
  j["error"] = {{"id", error_id(error.code)}, {"name", std::string(error_name(error.code))}, {"message", error.message}};
  return dump(j, rank);
}

}  // namespace nrt::cli

// `nrt-inspect shard IN --plan PLAN.json -o OUT`: makes a DTensor program of any program nrt reads
// (executor/dtensor/shard_plan.h), verified, written atomically. Exit 0, 1 for an invalid
// program or plan, 2 for usage or I/O trouble.
// `nrt-inspect plan FILE [--rank R]`: the sharding pass's plan of a DTensor program for rank R of
// its mesh: per node the rule, the placements, and each inserted redistribution with its collective.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nrt::cli {

struct ShardCommand {
  std::string in_path;
  std::string plan_path;
  std::string out_path;
};

struct PlanCommand {
  std::string path;
  int rank = 0;
  bool json = false;
};

CLI::App* add_shard_command(CLI::App& app, ShardCommand& command);
int run_shard_command(const ShardCommand& command);
CLI::App* add_plan_command(CLI::App& app, PlanCommand& command);
int run_plan_command(const PlanCommand& command);

}  // namespace nrt::cli

// The ranks of one job, for the tools and for library users alike. Started by a launcher
// (mpirun; detected from the environment by executor/comm/mpi_process_group.h), every rank
// initialises MPI and holds a world ProcessGroup of its own, through which the ranks agree before
// running — whether any failed a stage (so that one rank's bad input cannot leave the others
// waiting inside a collective), whether they hold the same program — and gather their texts
// (reports, directories). Started without one, it is a world of one with no group, and nothing
// here communicates: every collective below answers for this rank alone.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/comm/process_group.h"
#include "executor/comm/rank_agreement.h"  // rank_list
#include "executor/comm/stage_deadline.h"
#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt::exec {

struct RankWorld {
  int rank = 0;
  int size = 1;
  std::string launcher;                 // the environment variable that revealed it
  std::shared_ptr<ProcessGroup> group;  // null without a launcher
  // Every collective below, and every stage a caller puts under `deadline`, must complete within
  // this (NRT_COLLECTIVE_TIMEOUT_S, read when joining); past it `on_stage_timeout` gets the
  // CollectiveTimeout naming the stage (unset: log it and end the job with MPI_Abort, exit 2).
  std::chrono::milliseconds stage_timeout{600'000};
  std::function<void(const Error&)> on_stage_timeout;

  bool launched() const { return group != nullptr; }

  // Collective: the ranks whose `ok` is false, the same list on every rank.
  Result<std::vector<int>> failed_ranks(bool ok, std::string_view stage = "agreeing on failures") const;
  // Collective: every rank's text, in rank order, on every rank.
  Result<std::vector<std::string>> gather_texts(const std::string& text,
                                                std::string_view stage = "gathering the ranks' texts") const;
  // A deadline on `stage` for the scope of the returned object (none without a launcher).
  std::unique_ptr<StageDeadline> deadline(std::string_view stage) const;
};

// Initialises MPI and the world group (named `group_name`) when a launcher started this process.
Result<RankWorld> join_rank_world(std::string group_name = "nrt world");

// Collective: nullopt when every rank's `ok` is true; otherwise the error every rank stops with,
// "not running: ranks 1, 2 failed <stage>" (InvalidArgument).
Result<std::optional<Error>> failed_stage(const RankWorld& world, bool ok, std::string_view stage);

// Collective, before the first collective of a run: every rank must hold the same program (its
// structure digest: topology, targets, constants, types, meshes, process groups). Ranks running
// programs of their own (`per_rank_programs`: FILE with {rank}) may differ in weights and sizes,
// not in what they communicate: they compare their collective schedules instead
// (executor/comm/collective_schedule.h). Nullopt when they agree, else the RankMismatch error naming
// which ranks hold which digest (executor/comm/rank_agreement.h).
Result<std::optional<Error>> program_mismatch(const RankWorld& world, const fb::Program& program,
                                              bool per_rank_programs);

// Collective, after the sharding pass and before any communicator is created: every rank must
// create the same process groups (names, ranks, meshes) and issue the same collectives
// (executor/comm/collective_schedule.h) in the program it will run. Two DTensor programs of one
// graph with other placements, or a DTensor program on one rank and a plain one on another, agree
// on their files' schedules (the sharding pass inserts the collectives) but not here. Nullopt when
// they agree, else the RankMismatch error naming who differs.
Result<std::optional<Error>> communication_mismatch(const RankWorld& world, const fb::Program& program);

// `text` with every "{rank}" replaced by `rank`.
std::string with_rank(std::string text, int rank);

}  // namespace nrt::exec

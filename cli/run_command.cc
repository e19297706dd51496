#include "cli/run_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include "cli/run_report.h"
#include "executor/comm/mpi_process_group.h"
#include "session/run_job.h"

namespace nrt::cli {
namespace {

std::optional<RankInfo> rank_info(const exec::RankWorld& world) {
  if (!world.launched()) return std::nullopt;
  return RankInfo{world.rank, world.size};
}

int exit_code(RunStatus status) {
  switch (status) {
    case RunStatus::kOk:
      return kRunOk;
    case RunStatus::kMismatch:
      return kRunMismatch;
    case RunStatus::kFailed:
    case RunStatus::kInterrupted:
      return kRunFailed;
  }
  return kRunFailed;
}

}  // namespace

int run_program_command(const RunOptions& options) {
  RunJob job = options.job;
  job.world_name = "nrt-run world";
  std::optional<RankInfo> rank;
  job.joined = [&rank](const exec::RankWorld& world) {
    rank = rank_info(world);
    if (rank) spdlog::default_logger()->set_pattern("%n: rank " + std::to_string(world.rank) + ": %l: %v");
  };
  // A rank that cannot go on while others may wait for it: its error (and JSON line), then the
  // whole job ends.
  job.abandon = [&rank, json = options.json](const Error& error) {
    spdlog::error("{}", error.to_string());
    if (json) std::printf("%s\n", error_json(error, kRunFailed, rank).c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    exec::abort_mpi_world(kRunFailed);
  };
  // Repeated runs show their progress on a terminal, one line rewritten in place.
  if (job.repeat > 1 && !options.quiet && ::isatty(STDERR_FILENO) == 1) {
    job.progress = [](int done, int total, const std::vector<double>& times) {
      std::fprintf(stderr, "\r\033[Knrt-run: %d of %d runs, last %.4f ms", done, total, times.back());
      if (done == total) std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
    };
  }
  const RunOutcome outcome = run_job(job);
  const exec::RankWorld& world = outcome.world;
  // Interrupted repeats exit as the signal would have (128 + its number) after their report.
  const int code = outcome.status == RunStatus::kInterrupted ? 128 + outcome.report->interrupted_by
                                                             : exit_code(outcome.status);
  if (outcome.status == RunStatus::kInterrupted && job.progress) std::fprintf(stderr, "\n");
  if (outcome.error) spdlog::error("{}", outcome.error->to_string());

  // Rank 0 prints its text report, or every rank's JSON object in rank order (collective).
  if (!options.json) {
    if (outcome.report && world.rank == 0) print_run_text(*outcome.report, stdout);
    return code;
  }
  const std::string json = outcome.report ? run_json(*outcome.report, code, rank_info(world))
                                          : error_json(*outcome.error, code, rank_info(world));
  auto texts = world.gather_texts(json);
  if (!texts) {
    spdlog::error("cannot gather the ranks' reports: {}", texts.error().to_string());
    return kRunFailed;
  }
  if (world.rank == 0) {
    for (const auto& text : *texts) std::printf("%s\n", text.c_str());
  }
  return code;
}

}  // namespace nrt::cli

#include "session/run_job.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include "executor/runtime/memory_budget.h"
#include "io/npy.h"
#include "io/output_files.h"
#include "io/run_inputs.h"
#include "serializer/atomic_file.h"
#include "serializer/program_text.h"
#include "session/run_interruption.h"
#include "session/session.h"

namespace nrt {
namespace {

// What a run writes before the ranks agree that it finished (outputs, the profile trace) is not
// fsynced: on a busy disk ext4's fsync of a small file can take a minute (serializer/atomic_file.h),
// the other ranks wait for this one meanwhile, and a rank in fsync cannot even be killed. The
// rename still shows every reader the old file or the whole new one.
constexpr Durability kRunFileDurability = Durability::kSkipFsync;

RunOutcome failed(exec::RankWorld world, Error error) {
  RunOutcome outcome;
  outcome.status = RunStatus::kFailed;
  outcome.error = std::move(error);
  outcome.world = std::move(world);
  return outcome;
}

// Collective: ranks writing into one directory would overwrite each other's outputs. The
// directories are compared as resolved on each rank, so `--output-dir out$OMPI_COMM_WORLD_RANK`
// (expanded by a shell per rank) is as good as `--output-dir 'out_{rank}'`.
// Every output's file, checked before the run: a name that cannot be a file name, or a path that
// is a directory or another non-regular file, fails the job before anything is written (never a
// partial set of outputs).
std::optional<Error> check_output_paths(const Session& session, const RunJob& job, bool writes) {
  if (job.output_dir.empty() && job.expect_dir.empty()) return std::nullopt;
  for (const auto& output : session.plan().outputs) {
    if (output.kind != fb::OutputKind::USER_OUTPUT && output.kind != fb::OutputKind::LOSS_OUTPUT) continue;
    if (!exec::safe_file_name(output.name)) {
      return make_error(ErrorCode::InvalidArgument, "output name '" + output.name + "' cannot be used as a file name");
    }
    if (!writes) continue;
    const std::filesystem::path path = std::filesystem::path(job.output_dir) / (output.name + ".npy");
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(path, ec);
    if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
      return make_error(ErrorCode::IoWrite, "output '" + output.name + "' would be written to " + path.string() +
                                                ", which is not a regular file (nothing was written)");
    }
  }
  return std::nullopt;
}

std::optional<Error> shared_output_dir(const std::string& output_dir, const exec::RankWorld& world) {
  std::string resolved;
  if (!output_dir.empty()) {
    std::error_code ec;
    resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(output_dir, ec), ec).string();
    if (ec) resolved = output_dir;
  }
  NRT_TRY(dirs, world.gather_texts(resolved));
  for (size_t r = 0; r < dirs->size(); ++r) {
    if ((*dirs)[r].empty()) continue;
    std::vector<int> sharing;
    for (size_t q = 0; q < dirs->size(); ++q) {
      if ((*dirs)[q] == (*dirs)[r]) sharing.push_back(static_cast<int>(q));
    }
    if (sharing.size() > 1) {
      return make_error(ErrorCode::InvalidArgument,
                        "ranks [" + exec::rank_list(sharing) + "] would write their outputs into one directory, " +
                            (*dirs)[r] + ", overwriting each other; give each rank its own (--output-dir 'out_{rank}')");
    }
  }
  return std::nullopt;
}

// `job` with {rank} replaced in every path.
RunJob for_rank(RunJob job, int rank) {
  job.file = exec::with_rank(job.file, rank);
  job.output_dir = exec::with_rank(job.output_dir, rank);
  job.expect_dir = exec::with_rank(job.expect_dir, rank);
  job.profile_trace = exec::with_rank(job.profile_trace, rank);
  for (auto& input : job.inputs) input = exec::with_rank(input, rank);
  return job;
}

}  // namespace

RunOutcome run_job(const RunJob& given) {
  if (Status s = exec::apply_memory_budget(given.max_memory); !s) return failed({}, s.error());
  auto joined = exec::join_rank_world(given.world_name);
  if (!joined) return failed({}, joined.error());
  exec::RankWorld joined_world = std::move(*joined);
  // A stage past its deadline ends the job as every other abandonment does, after the flight
  // recorder's dump once the session exists.
  auto open_session = std::make_shared<std::atomic<const Session*>>(nullptr);
  joined_world.on_stage_timeout = [abandon = given.abandon, open_session](const Error& error) {
    if (const Session* session = open_session->load()) session->dump_flight_recorder("timeout");
    abandon_job(abandon, error);
  };
  const exec::RankWorld world = std::move(joined_world);
  if (given.joined) given.joined(world);
  const RunJob job = for_rank(given, world.rank);

  SessionOptions options;
  options.graph = job.graph;
  options.per_rank_program = given.file.find("{rank}") != std::string::npos;
  options.local_outputs = job.local_outputs;
  if (job.poison_freed) options.poison_freed = true;
  options.allow_tf32 = job.allow_tf32;
  options.threads = job.threads;
  options.seed = job.seed;
  auto device = parse_device(job.device);
  if (!device) return failed(world, device.error());
  options.device = *device;
  options.kernel_libraries = job.kernel_libraries;
  options.kernel_library_override = job.kernel_library_override;
  // Warnings quote the file's own text: escaped, as every printer of it is.
  options.open.warn = [&job](const std::string& line) { spdlog::warn("{}: {}", job.file, printable(line)); };
  options.abandon = job.abandon;
  auto opened = Session::open(job.file, world, options);
  if (!opened) return failed(world, opened.error());
  Session& session = **opened;
  open_session->store(&session);
  // The session goes before the world's copies do (a later collective, --json's report gathering,
  // may still be under a deadline).
  const auto forget_session = std::shared_ptr<void>(nullptr, [open_session](void*) { open_session->store(nullptr); });

  // Global outputs of a DTensor program are the same on every rank: into one directory, rank 0
  // writes them.
  std::optional<Error> problem;
  bool rank_zero_writes = false;
  if (world.launched()) {
    if (auto shared = shared_output_dir(job.output_dir, world)) {
      if (!session.outputs_are_global()) problem = *shared;
      rank_zero_writes = true;
    }
  }
  const bool writes = !job.output_dir.empty() && (!rank_zero_writes || world.rank == 0);
  exec::NamedInputs inputs;  // this rank's: cut once, not in every timed run
  if (!problem) {
    auto loaded = exec::load_run_inputs(session.inputs(InputsAre::kGlobal), job.inputs, job.random_seed);
    if (loaded) loaded = session.local_inputs(std::move(*loaded));
    if (loaded) {
      inputs = std::move(*loaded);
    } else {
      problem = loaded.error();
    }
  }
  if (!problem && writes) {
    std::error_code ec;
    std::filesystem::create_directories(job.output_dir, ec);
    if (ec) problem = make_error(ErrorCode::IoWrite, job.output_dir + ": cannot create directory: " + ec.message());
  }
  if (!problem) problem = check_output_paths(session, job, writes);
  if (auto stop = agree_on_stage(world, problem, "preparing the run", job.abandon)) return failed(world, *stop);

  RunReport report;
  report.file = job.file;
  report.world_size = world.size;
  report.graph = session.plan().graph_name;
  report.device = session.plan().device.to_string();
  report.atol = job.atol;
  report.rtol = job.rtol;
  std::vector<exec::NamedOutput> outputs;
  report.repeat = job.repeat;
  // Repeats are stopped, not killed, by SIGINT and SIGTERM: what was measured is reported.
  std::optional<RunInterruption> interruption;
  if ((job.repeat > 1 || job.warmup > 0) && !world.launched()) interruption.emplace();
  // A run that fails ends the job on every rank: the others may be waiting for it in a collective.
  auto run_failed = [&](const Error& error) {
    if (world.size > 1) abandon_job(job.abandon, error);
    return failed(world, error);
  };
  for (int w = 0; w < job.warmup; ++w) {
    auto result = session.run(inputs, InputsAre::kLocal);
    if (!result) return run_failed(result.error());
    report.warmup = w + 1;  // those done: a signal may end the warm-up early
    if (interruption && interruption->signal() != 0) {
      report.interrupted_by = interruption->signal();
      break;
    }
  }
  std::optional<exec::RunProfile> profile;
  if (job.profile || !job.profile_trace.empty()) {
    profile.emplace(!job.profile_trace.empty());
    session.set_profile(&*profile);
  }
  auto last_progress = std::chrono::steady_clock::now();
  for (int r = 0; r < job.repeat && report.interrupted_by == 0; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto result = session.run(inputs, InputsAre::kLocal);
    const auto stop = std::chrono::steady_clock::now();
    if (!result) return run_failed(result.error());
    report.times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    if (r + 1 == job.repeat) outputs = std::move(*result);
    if (job.progress && job.repeat > 1 && (r + 1 == job.repeat || stop - last_progress >= std::chrono::milliseconds(500))) {
      job.progress(r + 1, job.repeat, report.times_ms);
      last_progress = stop;
    }
    if (interruption && interruption->signal() != 0) {
      report.interrupted_by = interruption->signal();
      if (job.progress) job.progress(r + 1, job.repeat, report.times_ms);
      break;
    }
  }
  interruption.reset();
  if (report.interrupted_by != 0) {
    RunOutcome outcome;
    outcome.status = RunStatus::kInterrupted;
    outcome.report = std::move(report);
    outcome.world = world;
    return outcome;
  }
  if (profile) {
    session.set_profile(nullptr);
    if (job.profile) {
      report.profile_targets = exec::profile_by_target(*profile, session.plan());
      report.profile_nodes = exec::profile_by_node(*profile, session.plan());
    }
    if (!job.profile_trace.empty()) {
      const std::string trace = exec::chrome_trace_json(*profile, session.plan(), world.rank);
      const auto* bytes = reinterpret_cast<const uint8_t*>(trace.data());
      if (Status s = write_file_atomically(job.profile_trace, {bytes, trace.size()}, OnSignal::kRemoveTemporary,
                                           kRunFileDurability);
          !s) {
        return failed(world, s.error());
      }
    }
  }
  if (session.tracing()) report.collectives = session.tracing()->counts.snapshot();
  const auto& memory = session.memory_plan();
  report.arena_bytes = memory.arena_bytes;
  report.naive_bytes = memory.naive_bytes;
  report.live_peak_bytes = memory.live_peak_bytes;

  for (const auto& output : outputs) {
    OutputReport entry;
    entry.name = output.name;
    auto tensor = exec::output_tensor(output, &entry.type);
    if (!tensor) return failed(world, tensor.error());
    if (writes) {
      entry.path = (std::filesystem::path(job.output_dir) / (output.name + ".npy")).string();
      if (Status s = exec::write_npy(entry.path, *tensor, kRunFileDurability); !s) return failed(world, s.error());
    }
    if (!job.expect_dir.empty()) {
      entry.expected = (std::filesystem::path(job.expect_dir) / (output.name + ".npy")).string();
      auto expected = exec::read_npy(entry.expected);
      if (!expected) return failed(world, expected.error());
      entry.comparison = exec::compare_tensors(*tensor, *expected, exec::Tolerance{job.atol, job.rtol});
    }
    report.outputs.push_back(std::move(entry));
  }

  // The ranks end together (MPI_Finalize waits for every rank): a rank still running, or stuck,
  // is waited for at most the stage deadline, never forever.
  if (world.launched()) {
    if (auto together = world.failed_ranks(true, "finishing the run"); !together) return failed(world, together.error());
  }

  RunOutcome outcome;
  outcome.status = report.all_match() ? RunStatus::kOk : RunStatus::kMismatch;
  if (outcome.status == RunStatus::kMismatch) spdlog::error("outputs do not match {}", job.expect_dir);
  outcome.report = std::move(report);
  outcome.world = world;
  return outcome;
}

}  // namespace nrt

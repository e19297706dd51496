#include "session/session.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <string_view>

#include "executor/comm/dump_on_signal.h"
#include "executor/comm/mpi_process_group.h"
#include "executor/dtensor/sharded_program.h"
#include "executor/runtime/kernel_library.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/matmul_precision.h"

namespace nrt {
namespace {

// nrt-run's "failed" status; a library caller that wants another passes its own abandon.
constexpr int kAbandonExitCode = 2;

// The verdict of an agreement collective (program_mismatch, communication_mismatch): the
// mismatch every rank stops with, or nothing; a collective that itself failed ends the job.
std::optional<Error> agreed(Result<std::optional<Error>> mismatch, const SessionOptions& options) {
  if (!mismatch) abandon_job(options.abandon, mismatch.error());
  return *mismatch;
}

std::optional<Error> load_kernel_libraries(const SessionOptions& options) {
  for (const auto& library : options.kernel_libraries) {
    auto loaded = exec::load_kernel_library(library, exec::KernelRegistry::global(), options.kernel_library_override);
    if (!loaded) return loaded.error();
    spdlog::info("{}: {} kernel(s)", library, loaded->targets.size());
    for (const auto& replaced : loaded->replaced) spdlog::warn("{} replaces the kernel of {}", library, replaced);
  }
  return std::nullopt;
}

// Writes the recorder's dump and logs where it went, or why it could not be written.
void write_recorder_dump(const exec::CollectiveTracing& tracing, const char* reason) {
  auto path = tracing.write_dump(reason);
  if (path) {
    spdlog::log(std::string_view(reason) == "exit" ? spdlog::level::info : spdlog::level::warn,
                "flight recorder dump ({}): {}", reason, *path);
  } else {
    spdlog::error("flight recorder ({}): {}", reason, path.error().to_string());
  }
}

}  // namespace

void abandon_job(const std::function<void(const Error&)>& abandon, const Error& error) {
  if (abandon) abandon(error);
  spdlog::error("{}", error.to_string());
  std::fflush(stdout);
  std::fflush(stderr);
  exec::abort_mpi_world(kAbandonExitCode);
}

std::optional<Error> agree_on_stage(const exec::RankWorld& world, const std::optional<Error>& problem,
                                    const char* stage, const std::function<void(const Error&)>& abandon) {
  if (!world.launched()) return problem;
  auto failed = exec::failed_stage(world, !problem.has_value(), stage);
  if (!failed) abandon_job(abandon, failed.error());
  if (problem) return problem;
  return *failed;
}

bool is_collective_failure(ErrorCode code) {
  return code == ErrorCode::CollectiveFailed || code == ErrorCode::NanInCollective ||
         code == ErrorCode::CollectiveTimeout;
}

Result<std::unique_ptr<Session>> Session::open(const std::string& path, const SessionOptions& options) {
  return open(path, exec::RankWorld{}, options);
}

Result<std::unique_ptr<Session>> Session::open(const std::string& path, const exec::RankWorld& world,
                                               const SessionOptions& options) {
  std::optional<Error> problem = load_kernel_libraries(options);
  return start(problem ? Result<ProgramFile>(*problem) : open_program(path, options.open), world, options);
}

Result<std::unique_ptr<Session>> Session::open(ProgramFile file, const SessionOptions& options) {
  return open(std::move(file), exec::RankWorld{}, options);
}

Result<std::unique_ptr<Session>> Session::open(ProgramFile file, const exec::RankWorld& world,
                                               const SessionOptions& options) {
  std::optional<Error> problem = load_kernel_libraries(options);
  return start(problem ? Result<ProgramFile>(*problem) : Result<ProgramFile>(std::move(file)), world, options);
}

Result<std::unique_ptr<Session>> Session::start(Result<ProgramFile> file, const exec::RankWorld& world,
                                                const SessionOptions& options) {
  std::unique_ptr<Session> session(new Session());
  session->world_ = world;
  session->local_outputs_ = options.local_outputs;

  // A kernel library that failed to load, or a file that did not open: this rank's problem, which
  // the first agreement tells every rank.
  std::optional<Error> problem;
  if (!file) problem = file.error();
  // The hooks' settings come from this rank's environment: a bad one stops every rank here, before
  // any rank creates its groups (which every rank must do together). Read without a launcher too,
  // so that a bad value is never silently accepted.
  Result<exec::CollectiveHooksOptions> hooks = exec::collective_hooks_from_env();
  if (!hooks && !problem) problem = hooks.error();
  if (options.shard_plan && !problem) {
    file = dist::shard_with_plan(*file, *options.shard_plan);
    if (!file) problem = file.error();
  }
  if (auto stop = agree_on_stage(world, problem, "opening the program", options.abandon)) return *stop;
  if (auto stop = agreed(exec::program_mismatch(world, file->program(), options.per_rank_program), options)) return *stop;

  // A DTensor program: this rank runs the sharding pass's program for it.
  if (dist::is_dtensor_program(file->program())) {
    const dist::ShardingOptions shard{world.rank, world.size, options.graph, !options.local_outputs};
    if (auto sharded = dist::shard_program_file(*file, shard)) {
      file = std::move(sharded->file);
      session->sharding_ = std::move(sharded->plan);
      session->sharding_->program = {};  // the file holds it
    } else {
      problem = sharded.error();
    }
  }
  if (auto stop = agree_on_stage(world, problem, "sharding the program", options.abandon)) return *stop;
  // Before any communicator: the groups each rank will create and the collectives it will issue,
  // as the sharding pass left them.
  if (auto stop = agreed(exec::communication_mismatch(world, file->program()), options)) return *stop;

  exec::ExecutorOptions executor_options;
  executor_options.graph = options.graph;
  executor_options.poison_freed = options.poison_freed;
  executor_options.device = options.device;
  executor_options.seed = options.seed;
  exec::set_allow_tf32(options.allow_tf32);
  if (options.threads > 0) exec::set_intra_op_threads(options.threads);
  if (world.launched()) {
    auto registry = [&] {
      const auto watched = world.deadline("creating the process groups");
      return exec::mpi_process_registry(file->program());
    }();
    if (registry) {
      session->tracing_ = std::make_shared<exec::CollectiveTracing>(*hooks, world.rank, world.size);
      exec::CollectiveTracing* tracing = session->tracing_.get();  // outlives its watchdog, which it owns
      // A collective past its timeout: the recorder's dump, then the job ends (the caller's
      // abandon, else the default), logging the timeout.
      tracing->watchdog =
          std::make_unique<exec::CollectiveWatchdog>([tracing, abandon = options.abandon](const Error& timeout) {
            write_recorder_dump(*tracing, "timeout");
            abandon_job(abandon, timeout);
          });
      auto dump = [tracing](const char* reason) { write_recorder_dump(*tracing, reason); };
      if (Status s = exec::dump_on_signals(dump, std::chrono::seconds(2)); !s) {
        spdlog::warn("no flight recorder dumps on signals: {}", s.error().to_string());
      }
      exec::trace_process_groups(*registry, session->tracing_);
      executor_options.process_groups = std::make_shared<const exec::ProcessGroupRegistry>(std::move(*registry));
    } else {
      problem = registry.error();
    }
  }
  if (!problem) {
    if (auto executor = exec::Executor::load(std::move(*file), executor_options)) {
      session->executor_ = std::move(*executor);
    } else {
      problem = executor.error();
    }
  }
  if (auto stop = agree_on_stage(world, problem, "loading the program", options.abandon)) return *stop;
  return session;
}

Status Session::reserve_frames(size_t count) { return executor_->reserve_frames(count); }

void Session::dump_flight_recorder(const char* reason) const {
  if (tracing_ != nullptr) write_recorder_dump(*tracing_, reason);
}

Session::~Session() {
  if (tracing_ == nullptr) return;
  (void)exec::dump_on_signals({});  // the recorder goes away
  if (tracing_->options.fr_dump_on_exit) write_recorder_dump(*tracing_, "exit");
}

std::vector<exec::InputDescription> Session::inputs(InputsAre are) const {
  auto declared = executor_->user_inputs();
  if (sharding_ && are == InputsAre::kGlobal) return dist::global_input_descriptions(*sharding_, std::move(declared));
  return declared;
}

Result<exec::NamedInputs> Session::local_inputs(exec::NamedInputs global) const {
  if (sharding_) NRT_RETURN_IF_ERROR(dist::shard_user_inputs(*sharding_, global));
  return global;
}

Result<std::vector<exec::NamedOutput>> Session::run(const exec::NamedInputs& inputs, InputsAre are) {
  if (sharding_ && are == InputsAre::kGlobal) {
    NRT_TRY(local, local_inputs(inputs));
    return run(*local, InputsAre::kLocal);
  }
  if (tracing_) tracing_->counts.reset();  // the counts are of the last run
  auto outputs = executor_->run(inputs);
  if (!outputs && tracing_ && is_collective_failure(outputs.error().code)) {
    write_recorder_dump(*tracing_, "collective failed");
  }
  return outputs;
}

}  // namespace nrt

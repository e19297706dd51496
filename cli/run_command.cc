#include "cli/run_command.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/run_inputs.h"
#include "cli/program_input.h"
#include "cli/run_report.h"
#include "executor/dtensor/sharded_program.h"
#include "executor/comm/dump_on_signal.h"
#include "executor/runtime/executor.h"
#include "executor/runtime/kernel_library.h"
#include "executor/runtime/memory_budget.h"
#include "executor/comm/mpi_process_group.h"
#include "io/npy.h"
#include "executor/comm/rank_world.h"
#include "executor/comm/traced_process_group.h"
#include "serializer/atomic_file.h"

namespace nrt::cli {
namespace {

using RunWorld = exec::RankWorld;

// What one rank ends with: its exit status and what it reports.
struct RankOutcome {
  int exit_code = kRunOk;
  std::string json;                 // --json: this rank's object
  std::optional<RunReport> report;  // the text report, when the run completed
};

std::optional<RankInfo> rank_info(const RunWorld& world) {
  if (!world.launched()) return std::nullopt;
  return RankInfo{world.rank, world.size};
}

RankOutcome failure(const RunOptions& options, const RunWorld& world, const Error& error) {
  spdlog::error("{}", error.to_string());
  RankOutcome outcome;
  outcome.exit_code = kRunFailed;
  if (options.json) outcome.json = error_json(error, kRunFailed, rank_info(world));
  return outcome;
}

// A rank that cannot go on while others may be waiting for it inside a collective ends the job.
[[noreturn]] void abandon_job(const RunOptions& options, const RankOutcome& outcome) {
  if (options.json) std::printf("%s\n", outcome.json.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  exec::abort_mpi_world(outcome.exit_code);
}

bool is_collective_failure(ErrorCode code) {
  return code == ErrorCode::CollectiveFailed || code == ErrorCode::NanInCollective ||
         code == ErrorCode::CollectiveTimeout;
}

void dump_flight_recorder(const exec::CollectiveTracing& tracing, const char* reason) {
  auto path = tracing.write_dump(reason);
  if (path) {
    spdlog::log(std::string_view(reason) == "exit" ? spdlog::level::info : spdlog::level::warn,
                "flight recorder dump ({}): {}", reason, *path);
  } else {
    spdlog::error("flight recorder ({}): {}", reason, path.error().to_string());
  }
}

// The reliability hooks of this rank's collectives (docs/COLLECTIVES.md): traced groups share
// `tracing`; its watchdog logs a timeout, dumps and ends the job; SIGTERM and SIGUSR1 dump.
std::shared_ptr<exec::CollectiveTracing> start_collective_hooks(const exec::CollectiveHooksOptions& hooks,
                                                                const RunWorld& world) {
  auto tracing = std::make_shared<exec::CollectiveTracing>(hooks, world.rank, world.size);
  exec::CollectiveTracing* owner = tracing.get();  // outlives its watchdog, which it owns
  tracing->watchdog = std::make_unique<exec::CollectiveWatchdog>([owner](const Error& timeout) {
    spdlog::error("{}", timeout.to_string());
    dump_flight_recorder(*owner, "timeout");
    std::fflush(stdout);
    std::fflush(stderr);
    exec::abort_mpi_world(kRunFailed);
  });
  auto dump = [owner](const char* reason) { dump_flight_recorder(*owner, reason); };
  if (Status s = exec::dump_on_signals(dump, std::chrono::seconds(2)); !s) {
    spdlog::warn("no flight recorder dumps on signals: {}", s.error().to_string());
  }
  return tracing;
}

// NRT_FR_DUMP_ON_EXIT=1: the recorder is dumped when the rank's run ends; the signal dumps stop
// with it (the recorder goes away).
struct DumpAtExit {
  const exec::CollectiveTracing* tracing;
  ~DumpAtExit() {
    if (tracing == nullptr) return;
    (void)exec::dump_on_signals({});
    if (tracing->options.fr_dump_on_exit) dump_flight_recorder(*tracing, "exit");
  }
};

// Under a launcher every rank learns whether any failed `stage` (collective), so that all stop
// together before the run instead of some waiting forever in their first collective. Returns the
// outcome to stop with, or nullopt to go on.
std::optional<RankOutcome> agree(const RunOptions& options, const RunWorld& world, const std::optional<Error>& problem,
                                 const char* stage) {
  if (!world.launched()) {
    if (problem) return failure(options, world, *problem);
    return std::nullopt;
  }
  auto failed = exec::failed_stage(world, !problem.has_value(), stage);
  if (!failed) abandon_job(options, failure(options, world, failed.error()));
  if (problem) return failure(options, world, *problem);
  if (!*failed) return std::nullopt;
  return failure(options, world, **failed);
}

// Collective: the ranks hold the same program, or (FILE with {rank}) the same collective
// schedule (exec::program_mismatch); otherwise every rank stops naming who holds what.
std::optional<RankOutcome> agree_on_program(const RunOptions& options, const RunWorld& world, const ProgramFile& file) {
  auto mismatch = exec::program_mismatch(world, file.program(), options.per_rank_program);
  if (!mismatch) abandon_job(options, failure(options, world, mismatch.error()));
  if (!*mismatch) return std::nullopt;
  return failure(options, world, **mismatch);
}

// Collective: ranks writing into one directory would overwrite each other's outputs. The
// directories are compared as resolved on each rank, so `--output-dir out$OMPI_COMM_WORLD_RANK`
// (expanded by a shell per rank) is as good as `--output-dir 'out_{rank}'`.
std::optional<Error> shared_output_dir(const RunOptions& options, const RunWorld& world) {
  std::string resolved;
  if (!options.output_dir.empty()) {
    std::error_code ec;
    resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(options.output_dir, ec), ec).string();
    if (ec) resolved = options.output_dir;
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

// Output names become file names: only plain names are accepted.
bool safe_file_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 200) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Scalars (symbolic ints, floats, bools) are reported and written as 0-d arrays.
Result<exec::Tensor> output_tensor(const exec::NamedOutput& output, std::string* type) {
  const auto& v = output.value;
  if (const auto* t = std::get_if<exec::Tensor>(&v); t && t->defined()) {
    *type = t->type_string();
    return *t;
  }
  exec::Tensor scalar;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    scalar = exec::Tensor::empty(exec::ScalarType::INT64, {});
    scalar.data<int64_t>()[0] = *i;
    *type = "int";
  } else if (const auto* d = std::get_if<double>(&v)) {
    scalar = exec::Tensor::empty(exec::ScalarType::FLOAT64, {});
    scalar.data<double>()[0] = *d;
    *type = "float";
  } else if (const auto* b = std::get_if<bool>(&v)) {
    scalar = exec::Tensor::empty(exec::ScalarType::BOOL, {});
    scalar.data<uint8_t>()[0] = *b ? 1 : 0;
    *type = "bool";
  } else {
    return make_error(ErrorCode::InvalidArgument,
                      "output '" + output.name + "' is neither a tensor nor a number and cannot be written as .npy");
  }
  return scalar;
}

// Opens, binds (MPI groups under a launcher), loads and runs the program on this rank, then
// writes and compares its outputs.
RankOutcome run_on_rank(const RunOptions& options, const RunWorld& world) {
  std::optional<Error> problem;
  for (const auto& library : options.kernel_libraries) {
    auto loaded = exec::load_kernel_library(library, exec::KernelRegistry::global(), options.kernel_library_override);
    if (!loaded) {
      problem = loaded.error();
      break;
    }
    spdlog::info("{}: {} kernel(s)", library, loaded->targets.size());
    for (const auto& replaced : loaded->replaced) spdlog::warn("{} replaces the kernel of {}", library, replaced);
  }
  auto file = open_program_input(options.file);
  if (!file && !problem) problem = file.error();
  if (auto stop = agree(options, world, problem, "opening the program")) return *stop;
  if (auto stop = agree_on_program(options, world, *file)) return *stop;
  // Global outputs of a DTensor program are the same on every rank: into one directory, rank 0
  // writes them.
  const bool dtensor_program = dist::is_dtensor_program(file->program());
  const bool global_outputs = dtensor_program && !options.local_outputs;
  bool rank_zero_writes = false;
  if (world.launched()) {
    if (auto shared = shared_output_dir(options, world)) {
      if (!global_outputs) return failure(options, world, *shared);
      rank_zero_writes = true;
    }
  }

  // A DTensor program: this rank runs the sharding pass's program for it.
  std::optional<dist::ShardingResult> sharding;
  if (!problem && dtensor_program) {
    dist::ShardingOptions shard_options{world.rank, world.size, options.graph, !options.local_outputs};
    auto sharded = dist::shard_program_file(*file, shard_options);
    if (sharded) {
      file = std::move(sharded->file);
      sharding = std::move(sharded->plan);
      sharding->program = {};
    } else {
      problem = sharded.error();
    }
  }
  if (auto stop = agree(options, world, problem, "sharding the program")) return *stop;

  exec::ExecutorOptions executor_options;
  executor_options.graph = options.graph;
  if (options.poison_freed) executor_options.poison_freed = true;
  std::shared_ptr<exec::CollectiveTracing> tracing;
  if (world.launched()) {
    auto hooks = exec::collective_hooks_from_env();
    auto registry = hooks ? exec::mpi_process_registry(file->program()) : Result<exec::ProcessGroupRegistry>(hooks.error());
    if (registry) {
      tracing = start_collective_hooks(*hooks, world);
      exec::trace_process_groups(*registry, tracing);
      executor_options.process_groups = std::make_shared<const exec::ProcessGroupRegistry>(std::move(*registry));
    } else {
      problem = registry.error();
    }
  }
  const DumpAtExit dump_at_exit{tracing.get()};
  std::unique_ptr<exec::Executor> executor;
  if (!problem) {
    auto loaded = exec::Executor::load(std::move(*file), executor_options);
    if (loaded) {
      executor = std::move(*loaded);
    } else {
      problem = loaded.error();
    }
  }
  exec::NamedInputs inputs;
  if (!problem) {
    auto declared = executor->user_inputs();
    if (sharding) declared = dist::global_input_descriptions(*sharding, std::move(declared));
    auto loaded = load_run_inputs(declared, options.inputs, options.random_seed);
    if (loaded && sharding) {
      if (Status s = dist::shard_user_inputs(*sharding, *loaded); !s) loaded = s.error();
    }
    if (loaded) {
      inputs = std::move(*loaded);
    } else {
      problem = loaded.error();
    }
  }
  if (!problem && !options.output_dir.empty() && (!rank_zero_writes || world.rank == 0)) {
    std::error_code ec;
    std::filesystem::create_directories(options.output_dir, ec);
    if (ec) problem = make_error(ErrorCode::IoWrite, options.output_dir + ": cannot create directory: " + ec.message());
  }
  if (auto stop = agree(options, world, problem, "preparing the run")) return *stop;

  RunReport report;
  report.file = options.file;
  report.world_size = world.size;
  report.graph = executor->plan().graph_name;
  report.device = executor->plan().device.to_string();
  report.atol = options.atol;
  report.rtol = options.rtol;
  std::vector<exec::NamedOutput> outputs;
  std::optional<exec::RunProfile> profile;
  if (options.profile || !options.profile_trace.empty()) {
    profile.emplace(!options.profile_trace.empty());
    executor->set_profile(&*profile);
  }
  for (int r = 0; r < options.repeat; ++r) {
    if (tracing) tracing->counts.reset();  // the report counts the last run
    const auto start = std::chrono::steady_clock::now();
    auto result = executor->run(inputs);
    const auto stop = std::chrono::steady_clock::now();
    if (!result) {
      RankOutcome outcome = failure(options, world, result.error());
      if (tracing && is_collective_failure(result.error().code)) dump_flight_recorder(*tracing, "collective failed");
      if (world.size > 1) abandon_job(options, outcome);
      return outcome;
    }
    report.times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    if (r + 1 == options.repeat) outputs = std::move(*result);
  }
  if (profile) {
    executor->set_profile(nullptr);
    if (options.profile) {
      report.profile_targets = exec::profile_by_target(*profile, executor->plan());
      report.profile_nodes = exec::profile_by_node(*profile, executor->plan());
    }
    if (!options.profile_trace.empty()) {
      const std::string trace = exec::chrome_trace_json(*profile, executor->plan(), world.rank);
      const auto* bytes = reinterpret_cast<const uint8_t*>(trace.data());
      if (Status s = write_file_atomically(options.profile_trace, {bytes, trace.size()}); !s) {
        return failure(options, world, s.error());
      }
    }
  }
  if (tracing) report.collectives = tracing->counts.snapshot();
  const auto& memory = executor->memory_plan();
  report.arena_bytes = memory.arena_bytes;
  report.naive_bytes = memory.naive_bytes;
  report.live_peak_bytes = memory.live_peak_bytes;

  for (const auto& output : outputs) {
    OutputReport entry;
    entry.name = output.name;
    auto tensor = output_tensor(output, &entry.type);
    if (!tensor) return failure(options, world, tensor.error());
    if ((!options.output_dir.empty() || !options.expect_dir.empty()) && !safe_file_name(output.name)) {
      return failure(
          options, world,
          make_error(ErrorCode::InvalidArgument, "output name '" + output.name + "' cannot be used as a file name"));
    }
    if (!options.output_dir.empty() && (!rank_zero_writes || world.rank == 0)) {
      entry.path = (std::filesystem::path(options.output_dir) / (output.name + ".npy")).string();
      if (Status s = exec::write_npy(entry.path, *tensor); !s) return failure(options, world, s.error());
    }
    if (!options.expect_dir.empty()) {
      entry.expected = (std::filesystem::path(options.expect_dir) / (output.name + ".npy")).string();
      auto expected = exec::read_npy(entry.expected);
      if (!expected) return failure(options, world, expected.error());
      entry.comparison = exec::compare_tensors(*tensor, *expected, exec::Tolerance{options.atol, options.rtol});
    }
    report.outputs.push_back(std::move(entry));
  }

  RankOutcome outcome;
  outcome.exit_code = report.all_match() ? kRunOk : kRunMismatch;
  if (outcome.exit_code == kRunMismatch) spdlog::error("outputs do not match {}", options.expect_dir);
  if (options.json) outcome.json = run_json(report, outcome.exit_code, rank_info(world));
  outcome.report = std::move(report);
  return outcome;
}

// Rank 0 prints its text report, or every rank's JSON object in rank order (collective).
int finish(const RunOptions& options, const RunWorld& world, const RankOutcome& outcome) {
  if (!options.json) {
    if (outcome.report && world.rank == 0) print_run_text(*outcome.report, stdout);
    return outcome.exit_code;
  }
  auto texts = world.gather_texts(outcome.json);
  if (!texts) {
    spdlog::error("cannot gather the ranks' reports: {}", texts.error().to_string());
    return kRunFailed;
  }
  if (world.rank == 0) {
    for (const auto& text : *texts) std::printf("%s\n", text.c_str());
  }
  return outcome.exit_code;
}

// --max-memory, else NRT_MAX_MEMORY, else the executor's default (the available memory). A bad
// value is a usage error, never a silent default.
Status apply_memory_budget(const RunOptions& options) {
  std::string text = options.max_memory;
  std::string source = "--max-memory";
  if (text.empty()) {
    const char* variable = std::getenv("NRT_MAX_MEMORY");
    if (variable == nullptr || variable[0] == '\0') return {};
    text = variable;
    source = "NRT_MAX_MEMORY";
  }
  auto bytes = exec::parse_memory_size(text);
  if (!bytes) return make_error(bytes.error().code, source + ": " + bytes.error().message);
  exec::set_memory_budget(*bytes);
  return {};
}

}  // namespace

int run_program_command(const RunOptions& given) {
  if (Status s = apply_memory_budget(given); !s) {
    spdlog::error("{}", s.error().to_string());
    if (given.json) std::printf("%s\n", error_json(s.error(), kRunFailed).c_str());
    return kRunFailed;
  }
  auto world = exec::join_rank_world("nrt-run world");
  if (!world) {
    spdlog::error("{}", world.error().to_string());
    if (given.json) std::printf("%s\n", error_json(world.error(), kRunFailed).c_str());
    return kRunFailed;
  }
  if (world->launched()) spdlog::default_logger()->set_pattern("%n: rank " + std::to_string(world->rank) + ": %l: %v");

  RunOptions options = given;
  options.per_rank_program = given.file.find("{rank}") != std::string::npos;
  options.file = exec::with_rank(options.file, world->rank);
  options.output_dir = exec::with_rank(options.output_dir, world->rank);
  options.expect_dir = exec::with_rank(options.expect_dir, world->rank);
  options.profile_trace = exec::with_rank(options.profile_trace, world->rank);
  for (auto& input : options.inputs) input = exec::with_rank(input, world->rank);

  return finish(options, *world, run_on_rank(options, *world));
}

}  // namespace nrt::cli

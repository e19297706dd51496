#include "cli/run_command.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/run_inputs.h"
#include "cli/run_program_input.h"
#include "cli/run_report.h"
#include "executor/executor.h"
#include "executor/npy.h"

namespace nrt::cli {
namespace {

int fail(const RunOptions& options, const Error& error) {
  spdlog::error("{}", error.to_string());
  if (options.json) std::printf("%s\n", error_json(error, kRunFailed).c_str());
  return kRunFailed;
}

// Output names become file names: only plain names are accepted.
bool safe_file_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 200) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
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

}  // namespace

int run_program_command(const RunOptions& options) {
  auto file = open_run_program(options.file);
  if (!file) return fail(options, file.error());

  exec::ExecutorOptions executor_options;
  executor_options.graph = options.graph;
  if (options.poison_freed) executor_options.poison_freed = true;
  auto executor = exec::Executor::load(std::move(*file), executor_options);
  if (!executor) return fail(options, executor.error());

  auto inputs = load_run_inputs(**executor, options.inputs, options.random_seed);
  if (!inputs) return fail(options, inputs.error());

  RunReport report;
  report.file = options.file;
  report.graph = (*executor)->plan().graph_name;
  report.device = (*executor)->plan().device.to_string();
  report.atol = options.atol;
  report.rtol = options.rtol;
  std::vector<exec::NamedOutput> outputs;
  for (int r = 0; r < options.repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto result = (*executor)->run(*inputs);
    const auto stop = std::chrono::steady_clock::now();
    if (!result) return fail(options, result.error());
    report.times_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    if (r + 1 == options.repeat) outputs = std::move(*result);
  }
  const auto& memory = (*executor)->memory_plan();
  report.arena_bytes = memory.arena_bytes;
  report.naive_bytes = memory.naive_bytes;
  report.live_peak_bytes = memory.live_peak_bytes;

  if (!options.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.output_dir, ec);
    if (ec) {
      return fail(options, make_error(ErrorCode::IoWrite, options.output_dir + ": cannot create directory: " + ec.message()));
    }
  }
  for (const auto& output : outputs) {
    OutputReport entry;
    entry.name = output.name;
    auto tensor = output_tensor(output, &entry.type);
    if (!tensor) return fail(options, tensor.error());
    if ((!options.output_dir.empty() || !options.expect_dir.empty()) && !safe_file_name(output.name)) {
      return fail(options, make_error(ErrorCode::InvalidArgument,
                                      "output name '" + output.name + "' cannot be used as a file name"));
    }
    if (!options.output_dir.empty()) {
      entry.path = (std::filesystem::path(options.output_dir) / (output.name + ".npy")).string();
      if (Status s = exec::write_npy(entry.path, *tensor); !s) return fail(options, s.error());
    }
    if (!options.expect_dir.empty()) {
      entry.expected = (std::filesystem::path(options.expect_dir) / (output.name + ".npy")).string();
      auto expected = exec::read_npy(entry.expected);
      if (!expected) return fail(options, expected.error());
      entry.comparison = exec::compare_tensors(*tensor, *expected, exec::Tolerance{options.atol, options.rtol});
    }
    report.outputs.push_back(std::move(entry));
  }

  const int exit_code = report.all_match() ? kRunOk : kRunMismatch;
  if (options.json) {
    std::printf("%s\n", run_json(report, exit_code).c_str());
  } else {
    print_run_text(report, stdout);
  }
  if (exit_code == kRunMismatch) spdlog::error("outputs do not match {}", options.expect_dir);
  return exit_code;
}

}  // namespace nrt::cli

// What both tools do with flags CLI11 parses: numeric checks CLI11 lacks (its NonNegativeNumber
// lets NaN through, since NaN < 0 is false), and one form for every usage error, with the
// stable code NRT-E104 in front, as every other error nrt prints has.
#pragma once

#include <CLI/CLI.hpp>

#include <new>

namespace nrt::cli {

// A finite number >= 0 (tolerances).
const CLI::Validator& finite_non_negative();

// A whole number in [min, max], read as core/number_text.h reads every number (no empty value,
// no spaces around it; the error names the bound): --rank, --repeat, --warmup, --seed, --random-inputs.
CLI::Validator integer_in(int64_t min, int64_t max);

// A memory size for --max-memory (executor/runtime/memory_budget.h: parse_memory_size).
const CLI::Validator& memory_size();

// A device name for --device: cpu, cuda or cuda:N (core/device.h: parse_device).
const CLI::Validator& device_name();

// Usage errors print as "NRT-E104 InvalidArgument: <what CLI11 says>".
void print_usage_errors_with_code(CLI::App& app);

// The last line of defence of a tool's main: an allocation that escaped every check is reported
// (NRT-E1008) instead of aborting the process.
void report_escaped_bad_alloc(const char* tool, const std::bad_alloc& failure);

}  // namespace nrt::cli

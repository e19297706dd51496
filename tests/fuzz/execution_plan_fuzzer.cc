// libFuzzer target: arbitrary text as .nrt.json, verified, loaded by the executor and run once on
// inputs generated from the file's own size hints, under a 4 MiB memory budget. Whatever sizes
// the text declares (tensor metadata, symbolic hints, factory-op arguments, alignment, inline
// data), every step must end in a clean error or a result: never a crash, an allocation past
// the budget (libFuzzer's -rss_limit_mb catches those) or undefined behaviour. Programs with a
// while_loop are only loaded, not run: a loop that never ends is torch's semantics, not a bug.
// Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "executor/runtime/executor.h"
// scripts/fuzz.sh links the libraries of the headers a target includes: this one brings the CPU kernels.
#include "executor/kernels/cpu/gemm.h"
#include "executor/runtime/memory_budget.h"
#include "io/random_inputs.h"
#include "serializer/open_program.h"
#include "serializer/json_form.h"

namespace {

bool has_while_loop(const nrt::fb::Program& program) {
  for (uint32_t i = 0; program.operators() && i < program.operators()->size(); ++i) {
    const auto* name = program.operators()->Get(i)->name();
    if (name != nullptr && name->string_view().find("while_loop") != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nrt::exec::set_memory_budget(4 << 20);
  auto parsed = nrt::program_from_json(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed) return 0;
  auto file = nrt::verify_in_memory(std::move(*parsed));
  if (!file) return 0;
  const bool run = !has_while_loop(file->program());
  auto executor = nrt::exec::Executor::load(std::move(*file));
  if (!executor || !run) return 0;
  auto inputs = nrt::exec::random_inputs((*executor)->user_inputs(), 1);
  if (!inputs) return 0;
  auto outputs = (*executor)->run(*inputs);
  (void)outputs;
  return 0;
}

// The user inputs of an nrt-run: `--input NAME=PATH.npy` files (adapted to the declared dtype
// by the bf16 convention of io/npy.h; a symbolic int input takes a 0-d integer array),
// then `--random-inputs SEED` for the rest (io/random_inputs.h). Inputs missing from both
// are left for the executor to report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "executor/runtime/executor.h"

namespace nrt::exec {

// `declared`: the graph's user inputs (Executor::user_inputs; global sizes for DTensor inputs).
Result<NamedInputs> load_run_inputs(const std::vector<InputDescription>& declared,
                                          const std::vector<std::string>& specs, std::optional<uint64_t> random_seed);

}  // namespace nrt::exec

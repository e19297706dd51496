// A run's outputs as files: each user output as DIR/<name>.npy, scalars (symbolic ints, floats,
// bools) as 0-d arrays. Output names become file names, so only plain names are accepted.
#pragma once

#include <string>

#include "core/error.h"
#include "executor/runtime/executor.h"

namespace nrt::exec {

// Letters, digits, '_', '-', '.'; not starting with '.'; at most 200 characters.
bool safe_file_name(const std::string& name);

// The output as a tensor (a scalar as a 0-d array); `type` receives "f32[8,4]", "int", "float"
// or "bool".
Result<Tensor> output_tensor(const NamedOutput& output, std::string* type);

}  // namespace nrt::exec

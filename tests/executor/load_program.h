// A program built in memory (testdata/program_builder.h), verified and loaded by the executor: the
// first step of every test that runs one.
#pragma once

#include <memory>

#include "executor/runtime/executor.h"
#include "serializer/open_program.h"

namespace nrt::testing {

// Null, with a test failure naming the error, when verifying or loading fails.
std::unique_ptr<exec::Executor> load_program(ProgramWithWeights program);

}  // namespace nrt::testing

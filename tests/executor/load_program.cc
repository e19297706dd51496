#include "tests/executor/load_program.h"

#include <gtest/gtest.h>

namespace nrt::testing {

std::unique_ptr<exec::Executor> load_program(ProgramWithWeights program) {
  auto file = verify_in_memory(std::move(program));
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  if (!file) return nullptr;
  auto executor = exec::Executor::load(std::move(*file));
  EXPECT_TRUE(executor.ok()) << (executor.ok() ? "" : executor.error().to_string());
  return executor.ok() ? std::move(*executor) : nullptr;
}

}  // namespace nrt::testing

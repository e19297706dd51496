#include "tests/executor/fused_and_apart.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "executor/runtime/intra_op_threads.h"
#include "tests/executor/tensor_literals.h"

namespace nrt::testing {

bool same_bits_as_apart(exec::Executor& fused, exec::Executor& apart, const exec::NamedInputs& inputs,
                        const std::string& label, size_t compared) {
  for (int threads : {1, 3}) {
    exec::set_intra_op_threads(threads);
    auto got = fused.run(inputs);
    auto want = apart.run(inputs);
    exec::set_intra_op_threads(0);
    if (!got.ok() || !want.ok()) {
      ADD_FAILURE() << label << ": " << (got.ok() ? want.error().to_string() : got.error().to_string());
      return false;
    }
    const size_t count = std::min(compared, got->size());
    EXPECT_LE(count, want->size()) << label;
    for (size_t o = 0; o < count && o < want->size(); ++o) {
      EXPECT_EQ(f32_bits((*got)[o].value), f32_bits((*want)[o].value)) << label << ", output " << o << ", " << threads << " threads";
    }
  }
  return true;
}

}  // namespace nrt::testing

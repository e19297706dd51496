// The runtime's public headers (tensors, kernels, process groups, allocators) compile without the
// generated schema: a schema change cannot change the kernel-library ABI, and nvcc can compile
// them. This file fails to build if any of them reaches schema/nrt_generated.h.
#include "executor/runtime/allocator.h"
#include "executor/runtime/kernel.h"
#include "executor/comm/pending_collectives.h"
#include "executor/comm/process_group.h"
#include "executor/runtime/runtime_value.h"
#include "executor/runtime/tensor.h"

#ifdef FLATBUFFERS_GENERATED_NRT_NRT_FB_H_
#error "a runtime header includes schema/nrt_generated.h"
#endif

#include <gtest/gtest.h>

namespace nrt::exec {
namespace {

TEST(RuntimeHeaders, SpeakCoresEnums) {
  Tensor t = Tensor::empty(ScalarType::BFLOAT16, {3});
  EXPECT_EQ(t.dtype(), nrt::ScalarType::BFLOAT16);
  EXPECT_EQ(t.nbytes(), 6u);
  RuntimeValue layout = Layout::STRIDED;
  RuntimeValue format = MemoryFormat::CHANNELS_LAST;
  EXPECT_TRUE(std::holds_alternative<Layout>(layout));
  EXPECT_TRUE(std::holds_alternative<MemoryFormat>(format));
}

}  // namespace
}  // namespace nrt::exec

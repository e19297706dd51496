// Small float32 tensors written out in tests, and their values read back.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/runtime/runtime_value.h"

namespace nrt::testing {

// A contiguous f32 tensor of `sizes` holding `values` (row-major; as many as the sizes need).
exec::Tensor f32(const std::vector<int64_t>& sizes, const std::vector<float>& values);
// A 1-D f32 tensor holding `values`.
exec::Tensor f32(const std::vector<float>& values);
// A contiguous f32 tensor of `sizes` whose element i is sin(step * i + phase) * amplitude: inputs
// of many distinct values, each test its own.
exec::Tensor sine_f32(const std::vector<int64_t>& sizes, double step, double phase, double amplitude);
// A causal bool attention mask [positions, positions]: position i sees positions 0..i.
exec::Tensor causal_bool_mask(int64_t positions);

// The elements of an f32 tensor in row-major order, whatever its strides.
std::vector<float> f32_values(const exec::Tensor& t);
// The same for a tensor value; empty when the value holds no tensor.
std::vector<float> f32_values(const exec::RuntimeValue& value);
// Their bit patterns, for tests that compare bits (NaN's and the sign of zero included).
std::vector<uint32_t> f32_bits(const exec::RuntimeValue& value);

}  // namespace nrt::testing

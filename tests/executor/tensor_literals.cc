#include "tests/executor/tensor_literals.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "executor/runtime/tensor_copy.h"

namespace nrt::testing {

exec::Tensor f32(const std::vector<int64_t>& sizes, const std::vector<float>& values) {
  exec::Tensor t = exec::Tensor::empty(exec::ScalarType::FLOAT32, sizes);
  if (static_cast<size_t>(t.numel()) != values.size()) throw std::invalid_argument("f32: values do not fill the sizes");
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(float));
  return t;
}

exec::Tensor f32(const std::vector<float>& values) { return f32({static_cast<int64_t>(values.size())}, values); }

exec::Tensor sine_f32(const std::vector<int64_t>& sizes, double step, double phase, double amplitude) {
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    values[static_cast<size_t>(i)] = static_cast<float>(std::sin(step * static_cast<double>(i) + phase) * amplitude);
  }
  return f32(sizes, values);
}

exec::Tensor causal_bool_mask(int64_t positions) {
  exec::Tensor mask = exec::Tensor::empty(exec::ScalarType::BOOL, {positions, positions});
  for (int64_t i = 0; i < positions; ++i) {
    for (int64_t j = 0; j < positions; ++j) mask.data<bool>()[i * positions + j] = j <= i;
  }
  return mask;
}

std::vector<float> f32_values(const exec::Tensor& t) {
  const exec::Tensor dense = exec::contiguous_copy(t);
  return std::vector<float>(dense.data<float>(), dense.data<float>() + dense.numel());
}

std::vector<float> f32_values(const exec::RuntimeValue& value) {
  const auto* t = std::get_if<exec::Tensor>(&value);
  if (t == nullptr || !t->defined()) return {};
  return f32_values(*t);
}

std::vector<uint32_t> f32_bits(const exec::RuntimeValue& value) {
  const std::vector<float> values = f32_values(value);
  std::vector<uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

}  // namespace nrt::testing

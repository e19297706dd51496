#include "io/random_inputs.h"

#include <cstring>

#include "executor/runtime/memory_budget.h"
#include "executor/runtime/reduced_float.h"
#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53 * 2.0 - 1.0; }

 private:
  uint64_t state_;
};

template <typename T>
void fill(Tensor& t, SplitMix64& rng, T (*draw)(SplitMix64&)) {
  auto* data = t.data<T>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) data[i] = draw(rng);
}

}  // namespace

Result<NamedInputs> random_inputs(const std::vector<InputDescription>& inputs, uint64_t seed,
                                  const std::set<std::string, std::less<>>& skip) {
  SplitMix64 rng(seed);
  NamedInputs out;
  for (const auto& input : inputs) {
    if (skip.count(input.name)) continue;
    const std::string what = "input '" + input.name + "'";
    if (input.kind == fb::ValueKind::SYM_INT) {
      if (!input.sym_hint) {
        return make_error(ErrorCode::InvalidArgument, what + " is a symbolic int without a hint; give it with --input");
      }
      out[input.name] = *input.sym_hint;
      continue;
    }
    if (!is_tensor_kind(input.kind)) {
      return make_error(ErrorCode::InvalidArgument, what + " of kind " + fb::EnumNameValueKind(input.kind) +
                                                        " cannot be generated; give it with --input");
    }
    std::vector<int64_t> sizes;
    for (size_t d = 0; d < input.sizes.size(); ++d) {
      const auto& dim = input.sizes[d];
      if (dim.expr.empty()) {
        sizes.push_back(dim.literal);
      } else if (dim.hint && *dim.hint >= 0) {
        sizes.push_back(*dim.hint);
      } else {
        return make_error(ErrorCode::InvalidArgument, what + " dimension " + std::to_string(d) + " (" + dim.expr +
                                                          ") has no hint; give the input with --input");
      }
    }
    uint64_t numel = 1;
    for (int64_t s : sizes) {
      if (__builtin_mul_overflow(numel, static_cast<uint64_t>(s), &numel) || numel > (uint64_t{1} << 36)) {
        return make_error(ErrorCode::InvalidArgument, what + " is too large to generate");
      }
    }
    Tensor t;
    try {
      t = Tensor::empty(input.dtype, sizes);
    } catch (const std::bad_alloc& failure) {
      return memory_error(what, failure);
    }
    switch (input.dtype) {
      case ScalarType::FLOAT32:
        fill<float>(t, rng, [](SplitMix64& r) { return static_cast<float>(r.uniform()); });
        break;
      case ScalarType::FLOAT64:
        fill<double>(t, rng, [](SplitMix64& r) { return r.uniform(); });
        break;
      case ScalarType::FLOAT16:
        fill<uint16_t>(t, rng, [](SplitMix64& r) { return float_to_half(static_cast<float>(r.uniform())); });
        break;
      case ScalarType::BFLOAT16:
        fill<uint16_t>(t, rng, [](SplitMix64& r) { return float_to_bfloat16(static_cast<float>(r.uniform())); });
        break;
      case ScalarType::INT8:
        fill<int8_t>(t, rng, [](SplitMix64& r) { return static_cast<int8_t>(r.next() % 10); });
        break;
      case ScalarType::INT16:
        fill<int16_t>(t, rng, [](SplitMix64& r) { return static_cast<int16_t>(r.next() % 10); });
        break;
      case ScalarType::INT32:
        fill<int32_t>(t, rng, [](SplitMix64& r) { return static_cast<int32_t>(r.next() % 10); });
        break;
      case ScalarType::INT64:
        fill<int64_t>(t, rng, [](SplitMix64& r) { return static_cast<int64_t>(r.next() % 10); });
        break;
      case ScalarType::UINT8:
        fill<uint8_t>(t, rng, [](SplitMix64& r) { return static_cast<uint8_t>(r.next() % 10); });
        break;
      case ScalarType::UINT16:
        fill<uint16_t>(t, rng, [](SplitMix64& r) { return static_cast<uint16_t>(r.next() % 10); });
        break;
      case ScalarType::UINT32:
        fill<uint32_t>(t, rng, [](SplitMix64& r) { return static_cast<uint32_t>(r.next() % 10); });
        break;
      case ScalarType::UINT64:
        fill<uint64_t>(t, rng, [](SplitMix64& r) { return static_cast<uint64_t>(r.next() % 10); });
        break;
      case ScalarType::BOOL:
        fill<uint8_t>(t, rng, [](SplitMix64& r) { return static_cast<uint8_t>(r.next() & 1); });
        break;
      case ScalarType::COMPLEX64:
        for (int64_t i = 0; i < 2 * t.numel(); ++i) t.data<float>()[i] = static_cast<float>(rng.uniform());
        break;
      case ScalarType::COMPLEX128:
        for (int64_t i = 0; i < 2 * t.numel(); ++i) t.data<double>()[i] = rng.uniform();
        break;
      default:
        return make_error(ErrorCode::InvalidArgument, what + " has dtype " + std::string(nrt::short_name(input.dtype)) +
                                                          ", which --random-inputs cannot generate");
    }
    out[input.name] = std::move(t);
  }
  return out;
}

}  // namespace nrt::exec

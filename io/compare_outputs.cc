#include "io/compare_outputs.h"

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "executor/runtime/reduced_float.h"
#include "core/scalar_type.h"

namespace nrt::exec {
namespace {

using Complex = std::complex<double>;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// How to read one element of a tensor as a complex number (imaginary part 0 for reals).
std::optional<Complex> read_element(ScalarType dtype, const uint8_t* p) {
  switch (dtype) {
    case ScalarType::FLOAT32: return Complex(load<float>(p), 0);
    case ScalarType::FLOAT64: return Complex(load<double>(p), 0);
    case ScalarType::FLOAT16: return Complex(half_to_float(load<uint16_t>(p)), 0);
    case ScalarType::BFLOAT16: return Complex(bfloat16_to_float(load<uint16_t>(p)), 0);
    case ScalarType::INT8: return Complex(load<int8_t>(p), 0);
    case ScalarType::INT16: return Complex(load<int16_t>(p), 0);
    case ScalarType::INT32: return Complex(load<int32_t>(p), 0);
    case ScalarType::INT64: return Complex(static_cast<double>(load<int64_t>(p)), 0);
    case ScalarType::UINT8: return Complex(load<uint8_t>(p), 0);
    case ScalarType::UINT16: return Complex(load<uint16_t>(p), 0);
    case ScalarType::UINT32: return Complex(load<uint32_t>(p), 0);
    case ScalarType::UINT64: return Complex(static_cast<double>(load<uint64_t>(p)), 0);
    case ScalarType::BOOL: return Complex(load<uint8_t>(p) != 0 ? 1 : 0, 0);
    case ScalarType::COMPLEX64: return Complex(load<float>(p), load<float>(p + 4));
    case ScalarType::COMPLEX128: return Complex(load<double>(p), load<double>(p + 8));
    default: return std::nullopt;
  }
}

bool comparable(ScalarType t) {
  const uint8_t zeros[16] = {};
  return read_element(t, zeros).has_value();
}

bool is_complex(ScalarType t) { return t == ScalarType::COMPLEX64 || t == ScalarType::COMPLEX128; }

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

std::string value_text(Complex v, bool complex) {
  if (!complex) return number_text(v.real());
  std::string imag = number_text(v.imag());
  if (imag[0] != '-') imag = "+" + imag;
  return number_text(v.real()) + imag + "j";
}

bool has_nan(Complex v) { return std::isnan(v.real()) || std::isnan(v.imag()); }
bool has_inf(Complex v) { return std::isinf(v.real()) || std::isinf(v.imag()); }

}  // namespace

std::string index_text(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

Comparison compare_tensors(const Tensor& got, const Tensor& expected, const Tolerance& tolerance) {
  Comparison result;
  ScalarType expected_dtype = expected.dtype();
  const bool bf16_bits = got.dtype() == ScalarType::BFLOAT16 && expected.dtype() == ScalarType::UINT16;
  const bool bf16_values = got.dtype() == ScalarType::BFLOAT16 && expected.dtype() == ScalarType::FLOAT32;
  if (bf16_bits) expected_dtype = ScalarType::BFLOAT16;
  if (got.dtype() != expected.dtype() && !bf16_bits && !bf16_values) {
    result.problem = "dtype " + std::string(nrt::short_name(got.dtype())) + " differs from the expected " +
                     std::string(nrt::short_name(expected.dtype()));
    return result;
  }
  if (got.sizes() != expected.sizes()) {
    result.problem = "shape " + got.type_string() + " differs from the expected " + expected.type_string();
    return result;
  }
  if (!comparable(got.dtype())) {
    result.problem = "dtype " + std::string(nrt::short_name(got.dtype())) + " cannot be compared";
    return result;
  }

  const bool complex = is_complex(got.dtype());
  const int64_t numel = got.numel();
  const int64_t rank = got.dim();
  result.num_elements = numel;
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  const auto got_elem = static_cast<int64_t>(got.element_size());
  const auto exp_elem = static_cast<int64_t>(expected.element_size());
  const double inf = std::numeric_limits<double>::infinity();

  bool worst_fails = false;
  int64_t worst_flat = -1;
  double worst_abs = -1;
  double worst_rel = 0;
  Complex worst_a, worst_b;
  for (int64_t flat = 0; flat < numel; ++flat) {
    int64_t g_off = 0, e_off = 0;
    for (int64_t d = 0; d < rank; ++d) {
      g_off += index[static_cast<size_t>(d)] * got.strides()[static_cast<size_t>(d)];
      e_off += index[static_cast<size_t>(d)] * expected.strides()[static_cast<size_t>(d)];
    }
    const auto a = read_element(got.dtype(), got.raw_data() + g_off * got_elem);
    const auto b = read_element(expected_dtype, expected.raw_data() + e_off * exp_elem);
    double abs_error = 0, rel_error = 0;
    bool fails = false;
    if (has_nan(*a) || has_nan(*b)) {
      fails = !(has_nan(*a) && has_nan(*b));
      abs_error = rel_error = fails ? inf : 0;
    } else if (has_inf(*a) || has_inf(*b)) {
      fails = *a != *b;
      abs_error = rel_error = fails ? inf : 0;
    } else {
      abs_error = std::abs(*a - *b);
      const double magnitude = std::abs(*b);
      rel_error = magnitude > 0 ? abs_error / magnitude : (abs_error > 0 ? inf : 0);
      fails = abs_error > tolerance.atol && abs_error > tolerance.rtol * magnitude;
      result.max_abs_error = std::max(result.max_abs_error, abs_error);
      result.max_rel_error = std::max(result.max_rel_error, rel_error);
    }
    if (fails) ++result.num_mismatched;
    if ((fails && !worst_fails) || (fails == worst_fails && abs_error > worst_abs)) {
      worst_fails = fails;
      worst_flat = flat;
      worst_abs = abs_error;
      worst_rel = rel_error;
      worst_a = *a;
      worst_b = *b;
      result.worst_index = index;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < got.sizes()[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  result.ok = result.num_mismatched == 0;
  if (worst_flat >= 0) {
    result.has_worst = true;
    result.worst_got = value_text(worst_a, complex);
    result.worst_expected = value_text(worst_b, complex || is_complex(expected_dtype));
    result.worst_abs_error = worst_abs;
    result.worst_rel_error = worst_rel;
  }
  return result;
}

}  // namespace nrt::exec

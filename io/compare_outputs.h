// Comparing a computed tensor with a reference (Polygraphy's semantics; docs/EXECUTOR.md,
// "Comparing outputs").
//
// Element i fails only when it exceeds both tolerances: |got - expected| > atol AND
// |got - expected| > rtol * |expected|. NaN matches NaN only in the same position; an infinity
// matches only the same infinity; anything else against NaN or an infinity fails. The maximum
// absolute and relative errors are over every element whose values are finite on both sides
// (relative error: |diff| / |expected|, infinite when expected is 0 and diff is not). The worst
// element is the failing element with the largest absolute error (a NaN or infinity mismatch
// counts as infinite), or, when nothing fails, the element with the largest absolute error.
//
// Shapes must be equal. Dtypes must be equal, except the documented bf16 convention: a bf16
// result is compared with a float32 reference by value, or with a uint16 reference holding bf16
// bits. Complex values compare by the modulus of the difference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/runtime/tensor.h"

namespace nrt::exec {

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-5;
};

struct Comparison {
  bool ok = false;
  std::string problem;  // shape or dtype disagreement (then no element data)
  int64_t num_elements = 0;
  int64_t num_mismatched = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  // The worst element (see above); empty index for a 0-d tensor or when there are no elements.
  bool has_worst = false;
  std::vector<int64_t> worst_index;
  std::string worst_got;       // the values as text (complex as "a+bj")
  std::string worst_expected;
  double worst_abs_error = 0;
  double worst_rel_error = 0;
};

Comparison compare_tensors(const Tensor& got, const Tensor& expected, const Tolerance& tolerance = {});

// "[3, 1]"
std::string index_text(const std::vector<int64_t>& index);

}  // namespace nrt::exec

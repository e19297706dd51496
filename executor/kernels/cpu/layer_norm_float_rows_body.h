// The loops of layer_norm_float_rows.h, included once per instruction set
// (normalization_kernels.cc, layer_norm_float_rows_avx512.cc). Internal linkage: each build's copy
// must never stand in for the other's.
#pragma once

#include <cmath>
#include <cstdint>

namespace nrt::exec::cpu {
namespace {

void layer_norm_float_rows_body(const float* x, float* y, const float* weight, const float* bias, int64_t rows,
                                       int64_t columns, double eps, float* mean_out, float* rstd_out) {
  constexpr int64_t kLanes = 8;
  const int64_t n = columns;
  auto sum_of = [n](const float* row, double shift, bool squared) {
    double lanes[kLanes] = {};
    int64_t c = 0;
    for (; c + kLanes <= n; c += kLanes) {
      for (int64_t j = 0; j < kLanes; ++j) {
        const double d = static_cast<double>(row[c + j]) - shift;
        lanes[j] += squared ? d * d : d;
      }
    }
    double total = 0.0;
    for (double lane : lanes) total += lane;
    for (; c < n; ++c) {
      const double d = static_cast<double>(row[c]) - shift;
      total += squared ? d * d : d;
    }
    return total;
  };
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * n;
    const double mean = n ? sum_of(row, 0.0, false) / static_cast<double>(n) : 0.0;
    const double variance = n ? sum_of(row, mean, true) / static_cast<double>(n) : 0.0;
    const double rstd = 1.0 / std::sqrt(variance + eps);
    const auto scale = static_cast<float>(rstd), shift = static_cast<float>(-mean * rstd);
    float* out = y + r * n;
    if (weight != nullptr && bias != nullptr) {
      for (int64_t c = 0; c < n; ++c) out[c] = (row[c] * scale + shift) * weight[c] + bias[c];
    } else if (weight != nullptr) {
      for (int64_t c = 0; c < n; ++c) out[c] = (row[c] * scale + shift) * weight[c];
    } else if (bias != nullptr) {
      for (int64_t c = 0; c < n; ++c) out[c] = (row[c] * scale + shift) + bias[c];
    } else {
      for (int64_t c = 0; c < n; ++c) out[c] = row[c] * scale + shift;
    }
    if (mean_out) mean_out[r] = static_cast<float>(mean);
    if (rstd_out) rstd_out[r] = scale;
  }
}


}  // namespace
}  // namespace nrt::exec::cpu

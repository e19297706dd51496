// How a reduction walks its input: output elements iterate over the kept dimensions, and each one
// visits its reduced elements in row-major order of the reduced dimensions (so the k-th visited
// element is the k-th along the flattened reduced dims, which arg-reductions report).
#pragma once

#include <vector>

#include "executor/kernels/cpu/element_conversion.h"
#include "executor/kernels/cpu/strided_iteration.h"

namespace nrt::exec::cpu {

struct ReductionPlan {
  std::vector<bool> mask;            // reduced dimensions of the input
  bool keepdim = false;
  std::vector<int64_t> out_sizes;    // input sizes with reduced dims dropped, or 1 with keepdim
  std::vector<int64_t> kept_sizes;   // input sizes of the kept dims
  Tensor kept_input;                 // the input viewed over the kept dims
  RunLayout<1> reduced;              // the reduced dims, relative to one kept element
  int64_t reduced_numel = 1;
};

ReductionPlan plan_reduction(const Tensor& input, std::vector<bool> mask, bool keepdim);

// `out` (plan.out_sizes) viewed over the kept dims.
Tensor kept_output_view(const ReductionPlan& plan, const Tensor& out);

// Calls visit(output element pointer, input base pointer) for every output element; `out` has
// plan.out_sizes.
template <class Visit>
void for_each_reduction(const ReductionPlan& plan, const Tensor& out, Visit&& visit) {
  const Tensor out_view = kept_output_view(plan, out);
  for_each_run<2>(plan.kept_sizes, {&out_view, &plan.kept_input},
                  [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) visit(p[0] + i * s[0], p[1] + i * s[1]);
                  });
}

// The same with two outputs of plan.out_sizes (values and indices): visit(first, second, base).
template <class Visit>
void for_each_reduction(const ReductionPlan& plan, const Tensor& first, const Tensor& second, Visit&& visit) {
  const Tensor first_view = kept_output_view(plan, first), second_view = kept_output_view(plan, second);
  for_each_run<3>(plan.kept_sizes, {&first_view, &second_view, &plan.kept_input},
                  [&](const std::array<uint8_t*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) visit(p[0] + i * s[0], p[1] + i * s[1], p[2] + i * s[2]);
                  });
}

// Calls f(value) with every reduced element of type T below `base`, in row-major order.
template <class T, class F>
void for_each_reduced(const ReductionPlan& plan, uint8_t* base, F&& f) {
  for_each_run_in<1>(plan.reduced, {base},
                     [&](const std::array<uint8_t*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
                       if (s[0] == static_cast<int64_t>(sizeof(T))) {
                         const T* x = reinterpret_cast<const T*>(p[0]);
                         for (int64_t i = 0; i < n; ++i) f(load(x[i]));
                       } else {
                         for (int64_t i = 0; i < n; ++i) f(load(*reinterpret_cast<const T*>(p[0] + i * s[0])));
                       }
                     });
}

}  // namespace nrt::exec::cpu

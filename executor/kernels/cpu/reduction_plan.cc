#include "executor/kernels/cpu/reduction_plan.h"

namespace nrt::exec::cpu {

ReductionPlan plan_reduction(const Tensor& input, std::vector<bool> mask, bool keepdim) {
  ReductionPlan plan;
  plan.mask = std::move(mask);
  plan.keepdim = keepdim;
  std::vector<int64_t> kept_strides, reduced_sizes;
  std::array<std::vector<int64_t>, 1> reduced_strides;
  const auto element = static_cast<int64_t>(input.element_size());
  for (size_t d = 0; d < plan.mask.size(); ++d) {
    const int64_t size = input.sizes()[d];
    if (plan.mask[d]) {
      reduced_sizes.push_back(size);
      reduced_strides[0].push_back(input.strides()[d] * element);
      plan.reduced_numel *= size;
      if (keepdim) plan.out_sizes.push_back(1);
    } else {
      plan.kept_sizes.push_back(size);
      kept_strides.push_back(input.strides()[d]);
      plan.out_sizes.push_back(size);
    }
  }
  plan.kept_input = input.as_strided(plan.kept_sizes, kept_strides, input.storage_offset());
  plan.reduced = coalesce_runs<1>(reduced_sizes, {std::span<const int64_t>(reduced_strides[0])});
  return plan;
}

Tensor kept_output_view(const ReductionPlan& plan, const Tensor& out) {
  std::vector<int64_t> strides;
  size_t o = 0;
  for (size_t d = 0; d < plan.mask.size(); ++d) {
    if (!plan.mask[d]) strides.push_back(out.strides()[o]);
    if (!plan.mask[d] || plan.keepdim) ++o;
  }
  return out.as_strided(plan.kept_sizes, std::move(strides), out.storage_offset());
}

}  // namespace nrt::exec::cpu

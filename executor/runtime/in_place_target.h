// How an in-place or out= operator runs without a kernel of its own: as its functional operator
// writing into the tensor it mutates (execution_plan.h, "In-place ops").
//
//   aten::relu_.default      -> aten::relu.default      (writes into `self`)
//   aten::add_.Tensor        -> aten::add.Tensor
//   aten::__iand__.Tensor    -> aten::__and__.Tensor
//   aten::add.out            -> aten::add.Tensor, aten::add.default   (writes into `out`)
//   aten::div.out_mode       -> aten::div.Tensor_mode
//   aten::clamp.Tensor_out   -> aten::clamp.Tensor
//
// Candidates come in the order they are tried; the first with a kernel wins.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "executor/runtime/kernel.h"

namespace nrt::exec {

enum class MutationKind {
  kNone,     // a functional operator
  kInPlace,  // mutates its first argument, `self`
  kOut,      // writes into its `out` argument
};

struct FunctionalCandidates {
  MutationKind kind = MutationKind::kNone;
  std::vector<std::string> targets;  // empty for kNone
};

// Classifies "namespace::name.overload" and lists the functional targets it may run as.
FunctionalCandidates functional_candidates(std::string_view target);

// The kernel `target` runs with on `device`: its own, else (for in-place and out= targets) its
// functional operator's (`mutation` says which); `kernel` is nullptr when neither is registered.
struct ResolvedKernel {
  const KernelInfo* kernel = nullptr;
  MutationKind mutation = MutationKind::kNone;  // kNone: the target's own kernel
  std::string functional_target;               // when mutation != kNone
  KernelFn write_back = nullptr;               // when mutation != kNone: kWriteBackTarget's kernel
};
ResolvedKernel resolve_kernel(const KernelRegistry& registry, std::string_view target, DeviceKind device);

// Element-wise functional operators whose CPU kernels read each element of `self` before they
// write the same position of their output, and nothing else of `self`: relu_, hardtanh_, add_,
// ... may then compute straight into the mutated tensor instead of into scratch memory written
// back after (a memory pass less per in-place activation; execution_plan.h, "In-place ops").
bool computes_into_self(std::string_view functional_target);

// The functional kernel that writes an in-place result back into the mutated tensor.
inline constexpr std::string_view kWriteBackTarget = "aten::copy.default";

}  // namespace nrt::exec

// The targets of the ops the DTensor code builds or gives a meaning of its own: nrt's operators
// (their kernels are registered here and in executor/kernels/cpu) and the aten op a redistribution
// copies with. Defined once: the sharding pass builds nodes with them, the kernels register under
// them, and the sharding registry (sharding_rules.h) keys their entries by them. The runtime's
// facts about them (collective) are in executor/runtime/op_facts.h.
#pragma once

#include <string_view>

namespace nrt::dist {

// A program's own redistribution of a DTensor into its declared placements (planned as steps).
inline constexpr std::string_view kRedistributeTarget = "nrt::redistribute.default";
// One step of a planned redistribution (redistribute_kernel.cc), inserted by the sharding pass.
inline constexpr std::string_view kRedistributeStepTarget = "nrt::redistribute_step.default";
// argmax/argmin, max.dim/min.dim over a sharded dim (arg_reduce_kernel.cc).
inline constexpr std::string_view kShardedArgReduceTarget = "nrt::sharded_arg_reduce.default";
// The lookup of a vocabulary-sharded embedding (executor/kernels/cpu/indexing_kernels.cc).
inline constexpr std::string_view kMaskedEmbeddingTarget = "nrt::masked_embedding.default";
// Between a rank's local tensor and a DTensor (local_tensor_kernel.cc).
inline constexpr std::string_view kFromLocalTarget = "nrt::from_local.default";
inline constexpr std::string_view kToLocalTarget = "nrt::to_local.default";
// torch's name for a DTensor's to_local() in an exported graph (with attr "_local_tensor").
inline constexpr std::string_view kAccessInnerTensorTarget = "export::access_subclass_inner_tensor.default";
// The copy defining a value already in the placements asked for.
inline constexpr std::string_view kCloneTarget = "aten::clone.default";

}  // namespace nrt::dist

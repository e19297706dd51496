// The contract between the plan's convolution fusion (convolution_fusion.h) and the kernel that
// runs a fused convolution node: the node keeps its own target and arguments (KernelContext's
// target says which convolution overload parses them) and gains these, by name only (names no
// operator schema has, so no positional lookup can find them).
#pragma once

#include <string_view>

namespace nrt::exec::convolution_epilogue {

// Registered by the CPU kernels beside the convolutions; a device without it fuses nothing.
inline constexpr std::string_view kKernelTarget = "nrt::convolution_with_epilogue";

// The inference batch norm applied to the convolution's result: torch's batch_norm arguments.
inline constexpr std::string_view kBatchNormWeight = "nrt.batch_norm.weight";  // optional
inline constexpr std::string_view kBatchNormBias = "nrt.batch_norm.bias";      // optional
inline constexpr std::string_view kBatchNormMean = "nrt.batch_norm.running_mean";
inline constexpr std::string_view kBatchNormVar = "nrt.batch_norm.running_var";
inline constexpr std::string_view kBatchNormEps = "nrt.batch_norm.eps";

// A tensor of the output's dtype and sizes added after the batch norm, before the activation (a
// residual connection: ResNet's `out += identity`).
inline constexpr std::string_view kResidual = "nrt.residual";

// A float32 tensor [N or 1, C, 1, 1] that multiplies the input per channel before the
// convolution: a squeeze-excitation block's `scale * x` read by the convolution after it, whose
// mul node became a view of x (efficientnet's 16 such blocks: x stays channels-last from the
// depthwise convolution to the projection, where the mul read and wrote it NCHW).
inline constexpr std::string_view kInputScale = "nrt.input_scale";

// The activation applied last: "relu", "hardtanh" (with its min_val and max_val) or "silu".
inline constexpr std::string_view kActivation = "nrt.activation";
inline constexpr std::string_view kActivationMin = "nrt.activation.min_val";
inline constexpr std::string_view kActivationMax = "nrt.activation.max_val";

// true: the output is written channels-last (NHWC in memory, strides saying so), where only
// convolutions read it, global average pools (adaptive_avg_pool2d to 1x1, which sum NHWC rows in
// the same order) and max pools whose own result only such readers read: the first of a 2-D
// float32 convolution's readers that would copy it. Such a max_pool2d node gets it too, and
// writes its result channels-last (pooling_kernels.cc).
inline constexpr std::string_view kChannelsLastOutput = "nrt.channels_last_output";

// An expansion computed first (an inverted-residual block's pointwise convolution, its batch norm
// and activation fused as above): a depthwise convolution node given these reads its `input` as
// the expansion's input, and convolves the expansion's result, which is no longer a value of the
// plan (executor/kernels/cpu/expanded_depthwise.h). The expansion is 1x1, stride 1, no padding,
// groups 1; its weight, optional bias, batch norm and activation come under these names.
inline constexpr std::string_view kExpansionWeight = "nrt.expansion.weight";
inline constexpr std::string_view kExpansionBias = "nrt.expansion.bias";  // optional

// A depthwise convolution computed first (an inverted-residual block's, its batch norm and
// activation fused as above): a pointwise convolution node given these reads its `input` as the
// depthwise convolution's input, and projects the depthwise result, which is no longer a value of
// the plan (executor/kernels/cpu/projected_depthwise.h). The depthwise convolution is 2-D, one
// input channel per group, dilation 1; its weight, optional bias, stride and padding (int lists),
// batch norm and activation come under these names.
inline constexpr std::string_view kDepthwiseWeight = "nrt.depthwise.weight";
inline constexpr std::string_view kDepthwiseBias = "nrt.depthwise.bias";  // optional
inline constexpr std::string_view kDepthwiseStride = "nrt.depthwise.stride";
inline constexpr std::string_view kDepthwisePadding = "nrt.depthwise.padding";

// The names of a convolution's own batch norm and activation, and of its expansion's and depthwise
// convolution's.
struct EpilogueNames {
  std::string_view batch_norm_weight, batch_norm_bias, batch_norm_mean, batch_norm_var, batch_norm_eps;
  std::string_view activation, activation_min, activation_max;
};
inline constexpr EpilogueNames kOwnEpilogue{kBatchNormWeight, kBatchNormBias, kBatchNormMean, kBatchNormVar,
                                            kBatchNormEps,    kActivation,    kActivationMin, kActivationMax};
inline constexpr EpilogueNames kExpansionEpilogue{
    "nrt.expansion.batch_norm.weight", "nrt.expansion.batch_norm.bias", "nrt.expansion.batch_norm.running_mean",
    "nrt.expansion.batch_norm.running_var", "nrt.expansion.batch_norm.eps", "nrt.expansion.activation",
    "nrt.expansion.activation.min_val", "nrt.expansion.activation.max_val"};

inline constexpr EpilogueNames kDepthwiseEpilogue{
    "nrt.depthwise.batch_norm.weight", "nrt.depthwise.batch_norm.bias", "nrt.depthwise.batch_norm.running_mean",
    "nrt.depthwise.batch_norm.running_var", "nrt.depthwise.batch_norm.eps", "nrt.depthwise.activation",
    "nrt.depthwise.activation.min_val", "nrt.depthwise.activation.max_val"};

}  // namespace nrt::exec::convolution_epilogue

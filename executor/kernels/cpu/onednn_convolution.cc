#include "executor/kernels/cpu/onednn_convolution.h"

#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <oneapi/dnnl/dnnl.hpp>

#include "executor/kernels/cpu/channels_last_reorder.h"
#include "executor/kernels/cpu/pointwise_product.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/onednn_threads.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// One shape's primitives: the convolution on the layouts oneDNN chose, and the reorders between
// those and nrt's contiguous tensors (absent where oneDNN took the plain layout itself).
struct Primitives {
  memory::desc user_src, user_weights, user_bias, user_dst;
  dnnl::convolution_forward::primitive_desc convolution_pd;
  dnnl::convolution_forward convolution;
  std::optional<dnnl::reorder> src_in, weights_in, dst_out;
  // src_in and dst_out where they only move an NCHW tensor to channels-last or back, with
  // channels reorder_channels takes: done by it, 3-5x faster than oneDNN's (channels_last_reorder.h).
  bool src_transposed = false, dst_transposed = false;
  WeightLayout weights;  // user_weights as the convolution wants them (kept_weights)
  bool applies_activation = false;
};

// The thread count is part of the key: oneDNN fixes a primitive's partition of the work when it
// builds it, from the calling thread's OpenMP count, and runs that many threads whatever the count
// is when it executes.
using Key = std::array<int64_t, 29>;

Key key_of(const OneDnnConvolution& s, bool has_bias, int threads) {
  Key key{s.batches, s.channels, s.out_channels, s.groups, has_bias ? 1 : 0, threads};
  key[24] = static_cast<int64_t>(s.activation.kind);
  std::memcpy(&key[25], &s.activation.min, sizeof(double));
  std::memcpy(&key[26], &s.activation.max, sizeof(double));
  key[27] = s.input_channels_last ? 1 : 0;
  key[28] = s.output_channels_last ? 1 : 0;
  for (int i = 0; i < 3; ++i) {
    key[6 + i] = s.in[i];
    key[9 + i] = s.kernel[i];
    key[12 + i] = s.stride[i];
    key[15 + i] = s.dilation[i];
    key[18 + i] = s.pad_begin[i];
    key[21 + i] = s.pad_end[i];
  }
  return key;
}

std::optional<dnnl::reorder> reorder_if_needed(const memory::desc& from, const memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(onednn_engine(), from, onednn_engine(), to));
}

// Whether oneDNN applies the activation as a post-op: relu and clip cost it a max and a min.
// silu is left to the caller's loop (float_activation_loops.h), which ran it faster than oneDNN's
// swish post-op on the Zen 4 machine: 16->96 channels at 32x32, 98k outputs, 62 us of post-op
// against 50 in the loop; a depthwise 144 at 16x16, 38 against 19; efficientnet_b0_64 6% faster
// (docs/PERFORMANCE.md).
bool onednn_applies(const ConvolutionActivation& activation) {
  return activation.kind == ConvolutionActivation::Kind::kRelu || activation.kind == ConvolutionActivation::Kind::kClip;
}

// The activation as an eltwise post-op (oneDNN's clip is min(max(x, alpha), beta)).
dnnl::primitive_attr activation_attributes(const ConvolutionActivation& activation) {
  dnnl::primitive_attr attributes = onednn_attributes();
  dnnl::post_ops post_ops;
  switch (activation.kind) {
    case ConvolutionActivation::Kind::kRelu: post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f); break;
    case ConvolutionActivation::Kind::kClip:
      post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, static_cast<float>(activation.min),
                              static_cast<float>(activation.max));
      break;
    case ConvolutionActivation::Kind::kSilu:  // onednn_applies: left to the caller
    case ConvolutionActivation::Kind::kNone: return attributes;
  }
  attributes.set_post_ops(post_ops);
  return attributes;
}

// Depth 1 (2-D and 1-D convolutions) is given to oneDNN as 2-D, where its kernels cover most.
std::shared_ptr<const Primitives> build(const OneDnnConvolution& s, bool has_bias) {
  const int first = s.in[0] == 1 && s.kernel[0] == 1 && s.out[0] == 1 && s.pad_begin[0] == 0 && s.pad_end[0] == 0 ? 1 : 0;
  const bool grouped = s.groups > 1;
  memory::dims src{s.batches, s.channels}, dst{s.batches, s.out_channels}, weights;
  if (grouped) weights = {s.groups, s.out_channels / s.groups, s.channels / s.groups};
  else weights = {s.out_channels, s.channels};
  memory::dims strides, dilations, pad_l, pad_r;
  for (int i = first; i < 3; ++i) {
    src.push_back(s.in[i]);
    dst.push_back(s.out[i]);
    weights.push_back(s.kernel[i]);
    strides.push_back(s.stride[i]);
    dilations.push_back(s.dilation[i] - 1);  // oneDNN counts the gaps between taps
    pad_l.push_back(s.pad_begin[i]);
    pad_r.push_back(s.pad_end[i]);
  }
  const bool two_d = first == 1;
  if (!two_d && (s.input_channels_last || s.output_channels_last)) return nullptr;  // NHWC sides have depth 1
  const Tag plain = two_d ? Tag::nchw : Tag::ncdhw;
  const Tag plain_weights = grouped ? (two_d ? Tag::goihw : Tag::goidhw) : (two_d ? Tag::oihw : Tag::oidhw);
  const auto f32 = memory::data_type::f32;
  auto p = std::make_shared<Primitives>();
  bool pointwise = s.groups == 1;
  for (int i = 0; i < 3; ++i) pointwise = pointwise && s.kernel[i] == 1 && s.stride[i] == 1 && s.pad_begin[i] == 0 && s.pad_end[i] == 0;
  // A pointwise convolution is one matrix product on the plain layouts: where the activations
  // outweigh the weights, reordering them costs more than NHWC gains (mobilenet_v2: 13.1 ms
  // against 18.5 at 2 threads). Where the weights are 4x the activations or more, NHWC with
  // reorders wins (oneDNN's plain product is slow for few positions: 1152->192 channels at 2x2,
  // 64.9 us against 12.7; 512->2048 at 7x7, 983 against 761; docs/PERFORMANCE.md).
  const int64_t positions = s.batches * s.in[0] * s.in[1] * s.in[2];
  const bool weight_bound = s.channels * s.out_channels >= 4 * positions * (s.channels + s.out_channels);
  // NHWC, where a side already is, serves every shape.
  const bool channels_last = two_d && (s.input_channels_last || s.output_channels_last || (pointwise && weight_bound));
  // One position per image: the NCHW and NHWC bytes are the same.
  const bool src_point = s.in[1] * s.in[2] == 1, dst_point = s.out[1] * s.out[2] == 1;
  p->user_src = memory::desc(src, f32, s.input_channels_last || (channels_last && src_point) ? Tag::nhwc : plain);
  p->user_weights = memory::desc(weights, f32, plain_weights);
  p->user_bias = memory::desc({s.out_channels}, f32, Tag::x);
  p->user_dst = memory::desc(dst, f32, s.output_channels_last || (channels_last && dst_point) ? Tag::nhwc : plain);
  const bool plain_layouts = pointwise && !channels_last;
  const Tag layout = channels_last ? Tag::nhwc : (pointwise ? plain : Tag::any);
  const Tag weights_layout = plain_layouts ? plain_weights : Tag::any;
  const memory::desc conv_src(src, f32, layout), conv_weights(weights, f32, weights_layout), conv_dst(dst, f32, layout);
  const auto desc = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                               dnnl::algorithm::convolution_direct, conv_src, conv_weights,
                                                               p->user_bias, conv_dst, strides, dilations, pad_l, pad_r)
                             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                               dnnl::algorithm::convolution_direct, conv_src, conv_weights,
                                                               conv_dst, strides, dilations, pad_l, pad_r);
  p->applies_activation = !plain_layouts && onednn_applies(s.activation);
  p->convolution_pd = dnnl::convolution_forward::primitive_desc(
      desc, plain_layouts ? onednn_attributes() : activation_attributes(s.activation), onednn_engine());
  p->convolution = dnnl::convolution_forward(p->convolution_pd);
  p->src_in = reorder_if_needed(p->user_src, p->convolution_pd.src_desc());
  p->weights_in = reorder_if_needed(p->user_weights, p->convolution_pd.weights_desc());
  p->weights = weight_layout(p->user_weights, p->convolution_pd.weights_desc());
  p->dst_out = reorder_if_needed(p->convolution_pd.dst_desc(), p->user_dst);
  if (two_d) {
    const memory::desc src_plain(src, f32, Tag::nchw), src_last(src, f32, Tag::nhwc);
    const memory::desc dst_plain(dst, f32, Tag::nchw), dst_last(dst, f32, Tag::nhwc);
    p->src_transposed = p->src_in && p->user_src == src_plain && p->convolution_pd.src_desc() == src_last &&
                        reorder_channels_takes(s.channels);
    p->dst_transposed = p->dst_out && p->user_dst == dst_plain && p->convolution_pd.dst_desc() == dst_last &&
                        reorder_channels_takes(s.out_channels);
  }
  return p;
}

// Built once per shape; a shape oneDNN refused is remembered as null.
std::shared_ptr<const Primitives> primitives_for(const OneDnnConvolution& s, bool has_bias, int threads) {
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const Primitives>> cache;
  const Key key = key_of(s, has_bias, threads);
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  std::shared_ptr<const Primitives> built;
  try {
    built = build(s, has_bias);
  } catch (const dnnl::error&) {
    built = nullptr;
  }
  cache.emplace(key, built);
  return built;
}

}  // namespace

bool pointwise_product_takes(const OneDnnConvolution& s, const std::shared_ptr<const Storage>& weight_storage) {
  bool pointwise = s.groups == 1 && s.in[0] == 1;
  for (int i = 0; i < 3; ++i) {
    pointwise = pointwise && s.kernel[i] == 1 && s.stride[i] == 1 && s.pad_begin[i] == 0 && s.pad_end[i] == 0;
  }
  if (!pointwise || weight_storage == nullptr || !pointwise_product_available()) return false;
  const int64_t plane = s.in[1] * s.in[2], positions = s.batches * plane;
  const bool rows_in = s.input_channels_last || plane == 1, rows_out = s.output_channels_last || plane == 1;
  if (positions <= kFewPositions) return rows_in && (rows_out || s.batches == 1);
  return rows_in && rows_out;
}

OneDnnOutcome pointwise_product_convolution_forward(const OneDnnConvolution& s, const float* input,
                                                    const float* weight, const float* bias, float* output,
                                                    const std::shared_ptr<const Storage>& weight_storage) {
  if (!pointwise_product_takes(s, weight_storage)) return OneDnnOutcome::kRefused;
  LaidOutWeights packed;
  try {
    packed = pointwise_packed_weights(s.out_channels, s.channels, weight, weight_storage);
  } catch (const dnnl::error&) {
    return OneDnnOutcome::kRefused;
  }
  const auto* packed_weights = static_cast<const float*>(packed.memory.get_data_handle());
  const int64_t plane = s.in[1] * s.in[2], positions = s.batches * plane;
  const bool rows_out = s.output_channels_last || plane == 1;
  if (positions <= kFewPositions) {
    few_position_product(positions, s.channels, s.out_channels, packed_weights, input, s.channels, bias, output,
                         rows_out ? s.out_channels : 1, rows_out ? 1 : plane);
    return s.activation.kind == ConvolutionActivation::Kind::kNone ? OneDnnOutcome::kDone
                                                                   : OneDnnOutcome::kActivationLeftToCaller;
  }
  pointwise_product(positions, s.channels, s.out_channels, packed_weights, input, s.channels, bias,
                    output_clamp_of(s.activation), output, s.out_channels);
  return s.activation.kind == ConvolutionActivation::Kind::kSilu ? OneDnnOutcome::kActivationLeftToCaller
                                                                 : OneDnnOutcome::kDone;
}

OneDnnOutcome onednn_convolution_forward(const OneDnnConvolution& shape, const float* input, const float* weight,
                                         const float* bias, float* output,
                                         const std::shared_ptr<const Storage>& weight_storage) {
  const int threads = use_onednn_threads(intra_op_threads());
  const auto p = primitives_for(shape, bias != nullptr, threads);
  if (!p) return OneDnnOutcome::kRefused;
  try {
    dnnl::engine& engine = onednn_engine();
    dnnl::stream stream(engine);
    // oneDNN takes non-const handles; it reads the inputs only.
    memory user_src(p->user_src, engine, const_cast<float*>(input));
    memory user_weights(p->user_weights, engine, const_cast<float*>(weight));
    memory user_dst(p->user_dst, engine, output);
    memory src = user_src, weights = user_weights, dst = user_dst;
    LaidOutWeights kept;  // holds the kept weights' buffer through the call
    if (p->src_in) {
      src = memory(p->convolution_pd.src_desc(), engine);
      if (p->src_transposed) {
        reorder_channels(input, shape.batches, shape.channels, shape.in[1] * shape.in[2], true,
                         static_cast<float*>(src.get_data_handle()));
      } else {
        p->src_in->execute(stream, user_src, src);
      }
    }
    if (p->weights_in && weight_storage) {
      kept = kept_weights(p->weights, weight, weight_storage);
      weights = kept.memory;
    } else if (p->weights_in) {
      weights = memory(p->convolution_pd.weights_desc(), engine);
      p->weights_in->execute(stream, user_weights, weights);
    }
    if (p->dst_out) dst = memory(p->convolution_pd.dst_desc(), engine);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p->user_bias, engine, const_cast<float*>(bias)));
    args.emplace(DNNL_ARG_SCRATCHPAD, onednn_scratchpad(p->convolution_pd.scratchpad_desc()));
    p->convolution.execute(stream, args);
    if (p->dst_out && !p->dst_transposed) p->dst_out->execute(stream, dst, user_dst);
    stream.wait();
    if (p->dst_transposed) {
      reorder_channels(static_cast<const float*>(dst.get_data_handle()), shape.batches, shape.out_channels,
                       shape.out[1] * shape.out[2], false, output);
    }
  } catch (const dnnl::error&) {
    return OneDnnOutcome::kRefused;
  }
  return p->applies_activation || shape.activation.kind == ConvolutionActivation::Kind::kNone
             ? OneDnnOutcome::kDone
             : OneDnnOutcome::kActivationLeftToCaller;
}

}  // namespace nrt::exec::cpu

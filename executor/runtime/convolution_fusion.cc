#include "executor/runtime/convolution_fusion.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "executor/runtime/chain_fusion.h"
#include "executor/runtime/convolution_epilogue.h"
#include "executor/runtime/fused_chains.h"

namespace nrt::exec {
namespace {

namespace names = convolution_epilogue;

// Expansions of at least this many bytes (float32) run fused with their depthwise convolution:
// twice a Zen 4 core's L2. mobilenet_v2's first, 4.8 MB, took 0.56 ms fused against 0.91 apart;
// fused, its 1.8 MB ones took 0.97-1.0 of their time apart, its 0.6 MB ones 0.98-1.02, and the
// 14x14 and 7x7 ones 1.15-1.4 (1 thread, `nrt-run --profile`).
constexpr int64_t kFusedExpansionBytes = int64_t{2} << 20;

// Depthwise results of at least this many bytes (float32) in rows at least this wide run fused
// with their projection. In mobilenet_v2 at 1 thread (`nrt-run --profile`, 4 alternated rounds),
// the depthwise convolution and projection took, fused against apart: 112x112x32 (1.6 MB) 0.35
// ms against 0.46, 56x56x144 0.51 against 0.69, 28x28x144 and 28x28x192 (0.45 and 0.6 MB) 0.91-0.97
// of their time apart, but 14x14x384 and 14x14x576 (0.3 and 0.45 MB) 1.01-1.06.
constexpr int64_t kFusedDepthwiseBytes = int64_t{256} << 10;
constexpr int64_t kFusedDepthwiseWidth = 28;

bool is_convolution(std::string_view target) {
  static constexpr std::array<std::string_view, 7> kTargets = {
      "aten::convolution.default", "aten::conv1d.default", "aten::conv1d.padding", "aten::conv2d.default",
      "aten::conv2d.padding",      "aten::conv3d.default", "aten::conv3d.padding"};
  return std::find(kTargets.begin(), kTargets.end(), target) != kTargets.end();
}

// The activation a target applies ("relu", "hardtanh", "silu"; empty: none), in place or not.
std::string_view activation_of(std::string_view target) {
  static const std::map<std::string_view, std::string_view> kActivations = {
      {"aten::relu.default", "relu"},         {"aten::relu_.default", "relu"},
      {"aten::hardtanh.default", "hardtanh"}, {"aten::hardtanh_.default", "hardtanh"},
      {"aten::silu.default", "silu"},         {"aten::silu_.default", "silu"}};
  const auto found = kActivations.find(target);
  return found == kActivations.end() ? std::string_view() : found->second;
}

// Arguments a convolution takes over from the nodes it absorbs: its name for each, and the slot.
using Moved = std::vector<std::pair<std::string_view, int32_t>>;

class Fusion {
 public:
  Fusion(ExecutionPlan& plan, const KernelRegistry& registry) : plan_(plan), registry_(registry) {}

  void run() {
    const KernelInfo* fused = registry_.find(names::kKernelTarget, plan_.device.kind);
    alias_ = registry_.find("aten::alias.default", plan_.device.kind);
    if (fused == nullptr || alias_ == nullptr || !alias_->is_view) return;
    fused_ = *fused;
    fused_origin_ = registry_.origin(names::kKernelTarget, plan_.device.kind);
    index_slots();
    absorbed_.assign(plan_.nodes.size(), false);
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_input_scale(n);
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_at(n);
    for (size_t n = 0; n < plan_.nodes.size(); ++n) mark_channels_last_output(n);
    absorbed_kernel_ = registry_.find(fused_chains::kAbsorbedTarget, plan_.device.kind);
    if (absorbed_kernel_ == nullptr) return;
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_expansion(n);
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_depthwise(n);
  }

 private:
  // Which value each slot holds, which constant, and how many arguments (and graph outputs) read it.
  void index_slots() {
    const auto slots = static_cast<size_t>(plan_.num_slots);
    value_of_slot_.assign(slots, -1);
    constant_of_slot_.assign(slots, -1);
    reads_.assign(slots, 0);
    escapes_.assign(slots, false);
    for (size_t v = 0; v < plan_.values.size(); ++v) {
      const int32_t slot = plan_.values[v].slot;
      if (slot >= 0) value_of_slot_[static_cast<size_t>(slot)] = static_cast<int32_t>(v);
    }
    for (size_t c = 0; c < plan_.constants.size(); ++c) {
      constant_of_slot_[static_cast<size_t>(plan_.constants[c].slot)] = static_cast<int32_t>(c);
    }
    for (const PlannedNode& node : plan_.nodes) {
      for (int32_t slot : node.arg_slots) count_read(slot, false);
      for (const GatherStep& gather : node.gathers) {
        for (const auto& item : gather.items) count_read(item.slot, true);
      }
    }
    for (const PlannedGraphOutput& out : plan_.outputs) {
      if (out.value >= 0) count_read(plan_.values[static_cast<size_t>(out.value)].slot, true);
    }
  }
  // `escapes`: read by a list argument or a graph output, where a layout cannot follow.
  void count_read(int32_t slot, bool escapes) {
    if (slot < 0) return;
    ++reads_[static_cast<size_t>(slot)];
    if (escapes) escapes_[static_cast<size_t>(slot)] = true;
  }

  static int argument(const PlannedNode& node, std::string_view name, bool or_first = false) {
    for (size_t i = 0; i < node.arg_names.size(); ++i) {
      if (node.arg_names[i] == name) return static_cast<int>(i);
    }
    return or_first && !node.arg_names.empty() && node.arg_names[0].empty() ? 0 : -1;
  }
  // The node's first result when it is a tensor (its only one, but for the batch norm's unread
  // statistics), or -1.
  int32_t first_result(const PlannedNode& node) const {
    if (node.outputs.empty() || node.outputs[0].kind != OutputSlotKind::kValue) return -1;
    const ValueInfo& info = plan_.values[static_cast<size_t>(node.outputs[0].value)];
    return info.kind == fb::ValueKind::TENSOR ? node.outputs[0].value : -1;
  }
  // The node's single result when it is a tensor, or -1.
  int32_t single_result(const PlannedNode& node) const { return node.outputs.size() == 1 ? first_result(node) : -1; }
  // Outputs after the first that nothing reads (core ATen's batch norm returns two empty
  // statistics besides its result).
  bool only_first_read(const PlannedNode& node) const {
    for (size_t o = 1; o < node.outputs.size(); ++o) {
      const PlannedOutput& out = node.outputs[o];
      if (out.kind == OutputSlotKind::kList) return false;
      if (out.kind == OutputSlotKind::kValue && reads_[static_cast<size_t>(out.slot)] != 0) return false;
    }
    return true;
  }
  // Argument `index` of `node` reads `slot`, and no other argument of it does.
  static bool reads_once(const PlannedNode& node, int index, int32_t slot) {
    return index >= 0 && node.arg_slots[static_cast<size_t>(index)] == slot &&
           std::count(node.arg_slots.begin(), node.arg_slots.end(), slot) == 1;
  }
  // A slot the convolution at `step` may read in the batch norm's or activation's place: a
  // constant, or a value defined before it.
  bool ready_at(int32_t slot, int64_t step) const {
    if (slot < 0) return false;
    if (constant_of_slot_[static_cast<size_t>(slot)] >= 0) return true;
    const int32_t v = value_of_slot_[static_cast<size_t>(slot)];
    return v >= 0 && plan_.values[static_cast<size_t>(v)].def_step < step;
  }

  // An inference batch_norm at `n` over `input` alone: appends its arguments the convolution
  // takes over to `moved`.
  bool batch_norm_at(size_t n, int32_t input, int64_t conv_step, Moved& moved) const {
    if (n >= plan_.nodes.size()) return false;
    const PlannedNode& node = plan_.nodes[n];
    // torch.export's default IR has batch_norm (training a constant false); core ATen's,
    // _native_batch_norm_legit_no_training with its two statistics unread.
    const bool core_aten = node.target == "aten::_native_batch_norm_legit_no_training.default";
    if ((!core_aten && node.target != "aten::batch_norm.default") || node.in_place || !node.gathers.empty() ||
        first_result(node) < 0 || !only_first_read(node)) {
      return false;
    }
    if (!reads_once(node, argument(node, "input"), plan_.values[static_cast<size_t>(input)].slot)) return false;
    if (!core_aten) {
      const int training = argument(node, "training");
      if (training < 0) return false;
      const int32_t mode = constant_of_slot_[static_cast<size_t>(node.arg_slots[static_cast<size_t>(training)])];
      if (mode < 0) return false;
      const RuntimeValue& training_mode = plan_.constants[static_cast<size_t>(mode)].value;
      if (!std::holds_alternative<bool>(training_mode) || std::get<bool>(training_mode)) return false;
    }
    Moved taken;
    const std::pair<std::string_view, std::string_view> parameters[] = {
        {"weight", names::kBatchNormWeight}, {"bias", names::kBatchNormBias},
        {"running_mean", names::kBatchNormMean}, {"running_var", names::kBatchNormVar}, {"eps", names::kBatchNormEps}};
    for (const auto& [name, moved_name] : parameters) {
      const int index = argument(node, name);
      if (index < 0 || !ready_at(node.arg_slots[static_cast<size_t>(index)], conv_step)) return false;
      taken.emplace_back(moved_name, node.arg_slots[static_cast<size_t>(index)]);
    }
    moved.insert(moved.end(), taken.begin(), taken.end());
    return true;
  }

  // An activation at `n` over `input` alone (its other readers, after an in-place activation,
  // see the activated values, as they would have).
  bool activation_at(size_t n, int32_t input, int64_t conv_step, Moved& moved) {
    if (n >= plan_.nodes.size()) return false;
    const PlannedNode& node = plan_.nodes[n];
    const std::string_view kind = activation_of(node.target);
    if (kind.empty() || !node.gathers.empty() || single_result(node) < 0) return false;
    const int32_t slot = plan_.values[static_cast<size_t>(input)].slot;
    if (!reads_once(node, argument(node, "self", true), slot)) return false;
    if (!node.in_place && reads_[static_cast<size_t>(slot)] != 1) return false;
    Moved taken;
    if (kind == "hardtanh") {
      const std::pair<std::string_view, std::string_view> bounds[] = {{"min_val", names::kActivationMin},
                                                                      {"max_val", names::kActivationMax}};
      for (const auto& [name, moved_name] : bounds) {
        const int index = argument(node, name);
        if (index < 0) continue;  // the kernel's default applies
        if (!ready_at(node.arg_slots[static_cast<size_t>(index)], conv_step)) return false;
        taken.emplace_back(moved_name, node.arg_slots[static_cast<size_t>(index)]);
      }
    }
    moved.insert(moved.end(), taken.begin(), taken.end());
    moved.emplace_back(names::kActivation, constant_slot(RuntimeValue{std::string(kind)}));
    return true;
  }

  // A residual add at `n` of `input` and a tensor of its dtype and sizes defined before the
  // convolution (ResNet's `out += identity`, mobilenet_v2's `x + conv(x)`), alpha 1; in place, it
  // must write into `input`.
  bool residual_at(size_t n, int32_t input, int64_t conv_step, Moved& moved) const {
    if (n >= plan_.nodes.size()) return false;
    const PlannedNode& node = plan_.nodes[n];
    if ((node.target != "aten::add.Tensor" && node.target != "aten::add_.Tensor") || !node.gathers.empty() ||
        single_result(node) < 0) {
      return false;
    }
    const int32_t slot = plan_.values[static_cast<size_t>(input)].slot;
    const int self = argument(node, "self", true), other = argument(node, "other");
    if (self < 0 || other < 0) return false;
    const int32_t self_slot = node.arg_slots[static_cast<size_t>(self)], other_slot = node.arg_slots[static_cast<size_t>(other)];
    if (std::count(node.arg_slots.begin(), node.arg_slots.end(), slot) != 1) return false;
    if (node.in_place && self_slot != slot) return false;
    const int32_t residual_slot = self_slot == slot ? other_slot : (other_slot == slot ? self_slot : -1);
    if (residual_slot < 0 || !ready_at(residual_slot, conv_step)) return false;
    const int32_t residual = value_of_slot_[static_cast<size_t>(residual_slot)];
    if (residual < 0) return false;
    const ValueInfo& r = plan_.values[static_cast<size_t>(residual)];
    const ValueInfo& x = plan_.values[static_cast<size_t>(input)];
    if (r.kind != fb::ValueKind::TENSOR || r.dtype != x.dtype || r.sizes.size() != x.sizes.size()) return false;
    for (size_t d = 0; d < r.sizes.size(); ++d) {
      if (r.sizes[d].literal != x.sizes[d].literal || r.sizes[d].expr != x.sizes[d].expr) return false;
    }
    const int alpha = argument(node, "alpha");
    if (alpha >= 0) {
      const int32_t at = constant_of_slot_[static_cast<size_t>(node.arg_slots[static_cast<size_t>(alpha)])];
      if (at < 0) return false;
      const RuntimeValue& value = plan_.constants[static_cast<size_t>(at)].value;
      const bool one = (std::holds_alternative<int64_t>(value) && std::get<int64_t>(value) == 1) ||
                       (std::holds_alternative<double>(value) && std::get<double>(value) == 1.0);
      if (!one) return false;
    }
    moved.emplace_back(names::kResidual, residual_slot);
    return true;
  }

  int32_t constant_slot(RuntimeValue value) {
    const int32_t slot = add_constant_slot(plan_, std::move(value));
    value_of_slot_.push_back(-1);
    constant_of_slot_.push_back(static_cast<int32_t>(plan_.constants.size() - 1));
    reads_.push_back(1);
    escapes_.push_back(false);
    return slot;
  }

  // A convolution node whose kernel the fused one can stand in for.
  bool builtin_convolution(const PlannedNode& node) const {
    return is_convolution(node.target) && !node.in_place && node.gathers.empty() &&
           registry_.origin(node.target, plan_.device.kind) == fused_origin_;
  }

  // Whether a value's sizes are all literal, and then they (nullopt for no value, -1).
  std::optional<std::vector<int64_t>> literal_sizes(int32_t value) const {
    if (value < 0) return std::nullopt;
    std::vector<int64_t> sizes;
    for (const PlannedDim& d : plan_.values[static_cast<size_t>(value)].sizes) {
      if (!d.expr.empty()) return std::nullopt;
      sizes.push_back(d.literal);
    }
    return sizes;
  }

  // A 2-D float32 convolution at `n` whose input is mul(x, scale) (either order) with scale
  // [N or 1, C, 1, 1] and x [N, C, H, W], that mul's result read by the convolution alone: the mul
  // becomes a view of x and the convolution scales its input itself (convolution_epilogue.h's
  // kInputScale). No node between them writes in place, so x and scale still hold the mul's operands.
  void fuse_input_scale(size_t n) {
    PlannedNode& conv = plan_.nodes[n];
    if (!builtin_convolution(conv) || conv.target != "aten::conv2d.default") return;
    const int input = argument(conv, "input", true);
    if (input < 0) return;
    const int32_t product_slot = conv.arg_slots[static_cast<size_t>(input)];
    if (!reads_once(conv, input, product_slot) || reads_[static_cast<size_t>(product_slot)] != 1 ||
        escapes_[static_cast<size_t>(product_slot)]) {
      return;
    }
    const int32_t product = value_of_slot_[static_cast<size_t>(product_slot)];
    if (product < 0 || plan_.values[static_cast<size_t>(product)].def_step < 0) return;
    const auto m = static_cast<size_t>(plan_.values[static_cast<size_t>(product)].def_step);
    PlannedNode& mul = plan_.nodes[m];
    if (mul.target != "aten::mul.Tensor" || mul.in_place || !mul.gathers.empty() || single_result(mul) != product) return;
    if (writes_in_place_between(plan_, m + 1, n)) return;
    const int self = argument(mul, "self", true), other = argument(mul, "other");
    if (self < 0 || other < 0) return;
    const int32_t self_slot = mul.arg_slots[static_cast<size_t>(self)], other_slot = mul.arg_slots[static_cast<size_t>(other)];
    if (self_slot < 0 || other_slot < 0 || self_slot == other_slot) return;
    const int32_t self_value = value_of_slot_[static_cast<size_t>(self_slot)];
    const int32_t other_value = value_of_slot_[static_cast<size_t>(other_slot)];
    if (self_value < 0 || other_value < 0) return;
    const auto product_sizes = literal_sizes(product);
    if (!product_sizes || product_sizes->size() != 4) return;
    // Which operand is x (the product's sizes) and which the per-channel scale.
    auto is_float32_tensor = [&](int32_t v) {
      const ValueInfo& info = plan_.values[static_cast<size_t>(v)];
      return info.kind == fb::ValueKind::TENSOR && info.dtype == ScalarType::FLOAT32;
    };
    auto is_scale = [&](int32_t v) {
      const auto sizes = literal_sizes(v);
      return sizes && sizes->size() == 4 && ((*sizes)[0] == 1 || (*sizes)[0] == (*product_sizes)[0]) &&
             (*sizes)[1] == (*product_sizes)[1] && (*sizes)[2] == 1 && (*sizes)[3] == 1;
    };
    int32_t x = -1, x_slot = -1, scale_slot = -1;
    if (literal_sizes(self_value) == product_sizes && is_scale(other_value)) {
      x = self_value, x_slot = self_slot, scale_slot = other_slot;
    } else if (literal_sizes(other_value) == product_sizes && is_scale(self_value)) {
      x = other_value, x_slot = other_slot, scale_slot = self_slot;
    } else {
      return;
    }
    if (!is_float32_tensor(x) || !is_float32_tensor(value_of_slot_[static_cast<size_t>(scale_slot)]) ||
        !is_float32_tensor(product)) {
      return;
    }
    conv.kernel = fused_;
    conv.arg_names.emplace_back(names::kInputScale);
    conv.arg_slots.push_back(scale_slot);
    // The scale is read at the convolution now, no longer at the mul: its memory lives until then.
    ValueInfo& scale = plan_.values[static_cast<size_t>(value_of_slot_[static_cast<size_t>(scale_slot)])];
    scale.last_use = std::max(scale.last_use, static_cast<int64_t>(n));
    make_view(m, x_slot, x);
  }

  void fuse_at(size_t n) {
    PlannedNode& conv = plan_.nodes[n];
    if (!builtin_convolution(conv)) return;
    const int32_t result = single_result(conv);
    if (result < 0) return;
    const ValueInfo& info = plan_.values[static_cast<size_t>(result)];
    if (info.dtype != ScalarType::FLOAT32 && info.dtype != ScalarType::FLOAT64) return;
    const auto step = static_cast<int64_t>(n);
    Moved moved;
    // The nodes that become views of the convolution's result, with the slot of the chain's value
    // each reads.
    std::vector<std::pair<size_t, int32_t>> absorbed;
    int32_t last = result;  // the value the next node of the chain must read
    auto absorb = [&](size_t node) {
      absorbed.emplace_back(node, plan_.values[static_cast<size_t>(last)].slot);
      last = first_result(plan_.nodes[node]);
    };
    auto in_place_at = [&](size_t node) { return node < plan_.nodes.size() && plan_.nodes[node].in_place.has_value(); };
    auto sole_reader = [&] { return reads_[static_cast<size_t>(plan_.values[static_cast<size_t>(last)].slot)] == 1; };
    if (sole_reader() && batch_norm_at(n + 1, last, step, moved)) absorb(n + 1);
    if ((sole_reader() || in_place_at(n + 1 + absorbed.size())) && residual_at(n + 1 + absorbed.size(), last, step, moved)) {
      absorb(n + 1 + absorbed.size());
    }
    if ((sole_reader() || in_place_at(n + 1 + absorbed.size())) && activation_at(n + 1 + absorbed.size(), last, step, moved)) {
      absorb(n + 1 + absorbed.size());
    }
    if (absorbed.empty()) return;

    PlannedNode& fused = plan_.nodes[n];
    fused.kernel = fused_;
    for (const auto& [name, slot] : moved) {
      fused.arg_names.emplace_back(name);
      fused.arg_slots.push_back(slot);
    }
    for (const auto& [a, input_slot] : absorbed) make_view(a, input_slot, result);
  }

  // Node `a` becomes a view of the value in `input_slot`, whose memory is `base`'s (chain_fusion.h's
  // make_alias_view; an in-place activation's output among the views it re-roots).
  void make_view(size_t a, int32_t input_slot, int32_t base) {
    absorbed_[a] = true;
    make_alias_view(plan_, *alias_, a, input_slot, base);
  }

  // adaptive_avg_pool2d to 1x1 (a squeeze-excitation block's): it reads channels-last rows as
  // they are, summing each channel in the same order (pooling_kernels.cc).
  bool global_average_pool(const PlannedNode& node) const {
    if (node.target != "aten::adaptive_avg_pool2d.default" || node.in_place || !node.gathers.empty()) return false;
    return pair_argument(node, "output_size", {}) == std::vector<int64_t>{1, 1};  // [1] or [1, 1]
  }

  // max_pool2d without indices (resnet's stem pool): it reads channels-last rows as they are and,
  // marked, writes its result so (pooling_kernels.cc). Any other kernel registered for it reads
  // a strided input as every kernel may, and ignores the mark.
  bool channels_last_max_pool(const PlannedNode& node) const {
    return node.target == "aten::max_pool2d.default" && !node.in_place && node.gathers.empty();
  }

  // Whether every reader of `slot` (written by node n) can take it channels-last: convolutions, as
  // their input or residual, directly or through the views fusion made; global average pools; max
  // pools whose own results only such readers take (added to `pools`, to be marked). `convolution`
  // is set where a convolution reads it, or a marked pool's result.
  bool channels_last_readers(size_t n, int32_t slot, std::vector<size_t>& pools, bool& convolution) const {
    std::vector<int32_t> pending = {slot};
    while (!pending.empty()) {
      const int32_t s = pending.back();
      pending.pop_back();
      if (escapes_[static_cast<size_t>(s)]) return false;
      for (size_t m = n + 1; m < plan_.nodes.size(); ++m) {
        const PlannedNode& reader = plan_.nodes[m];
        for (size_t a = 0; a < reader.arg_slots.size(); ++a) {
          if (reader.arg_slots[a] != s) continue;
          if (absorbed_[m]) {
            pending.push_back(plan_.values[static_cast<size_t>(first_result(reader))].slot);
          } else if (builtin_convolution(reader) && (reader.arg_names[a] == "input" || reader.arg_names[a] == names::kResidual)) {
            convolution = true;
          } else if (channels_last_max_pool(reader) && reader.arg_names[a] == "self" && single_result(reader) >= 0) {
            const int32_t pooled = plan_.values[static_cast<size_t>(single_result(reader))].slot;
            bool pooled_by_convolution = false;
            if (!channels_last_readers(m, pooled, pools, pooled_by_convolution) || !pooled_by_convolution) return false;
            if (std::find(pools.begin(), pools.end(), m) == pools.end()) pools.push_back(m);
            convolution = true;
          } else if (!global_average_pool(reader)) {
            return false;
          }
        }
      }
    }
    return true;
  }

  // A 2-D float32 convolution's result that only channels_last_readers read is written
  // channels-last (convolution_epilogue.h), and so are the max pools' between: no other kernel
  // ever sees those strides, the next convolution reads it without a reorder and a global average
  // pool sums its rows. mobilenet_v2's last convolution, read by the pool alone, took 0.50 ms
  // writing NCHW on oneDNN and 0.42 channels-last on pointwise_product.h's tiles, the pool 24 us
  // over planes and 9 over rows.
  void mark_channels_last_output(size_t n) {
    PlannedNode& conv = plan_.nodes[n];
    if (!builtin_convolution(conv)) return;
    const int32_t result = single_result(conv);
    if (result < 0) return;
    const ValueInfo& info = plan_.values[static_cast<size_t>(result)];
    if (info.dtype != ScalarType::FLOAT32 || info.sizes.size() != 4) return;
    std::vector<size_t> pools;
    bool read_by_convolution = false;  // what a max pool's marking needs; the convolution's not
    if (!channels_last_readers(n, info.slot, pools, read_by_convolution)) return;
    conv.kernel = fused_;
    mark_channels_last(conv);
    for (size_t m : pools) mark_channels_last(plan_.nodes[m]);
  }

  // The int list constant of argument `name` (one value stands for both dims), `absent` where
  // the node lacks the argument; nullopt where it is not a constant list.
  std::optional<std::vector<int64_t>> pair_argument(const PlannedNode& node, std::string_view name,
                                                    std::vector<int64_t> absent) const {
    const int index = argument(node, name);
    if (index < 0) return absent;
    const int32_t at = constant_of_slot_[static_cast<size_t>(node.arg_slots[static_cast<size_t>(index)])];
    if (at < 0) return std::nullopt;
    const auto* list = std::get_if<std::vector<int64_t>>(&plan_.constants[static_cast<size_t>(at)].value);
    if (list == nullptr) return std::nullopt;
    return list->size() == 1 ? std::vector<int64_t>(2, (*list)[0]) : *list;
  }
  // The int constant of argument `name`, `absent` where the node lacks it.
  std::optional<int64_t> int_argument(const PlannedNode& node, std::string_view name, int64_t absent) const {
    const int index = argument(node, name);
    if (index < 0) return absent;
    const int32_t at = constant_of_slot_[static_cast<size_t>(node.arg_slots[static_cast<size_t>(index)])];
    if (at < 0) return std::nullopt;
    const auto* value = std::get_if<int64_t>(&plan_.constants[static_cast<size_t>(at)].value);
    return value != nullptr ? std::optional<int64_t>(*value) : std::nullopt;
  }
  // A conv2d with the fused kernel writing its float32 result channels-last, with neither a
  // residual, an input scale, an expansion nor a depthwise stage of its own; its weight's literal
  // sizes.
  std::optional<std::vector<int64_t>> plain_channels_last_conv2d(const PlannedNode& node) const {
    if (!builtin_convolution(node) || node.target != "aten::conv2d.default" ||
        argument(node, names::kChannelsLastOutput) < 0 || argument(node, names::kResidual) >= 0 ||
        argument(node, names::kInputScale) >= 0 || argument(node, names::kExpansionWeight) >= 0 ||
        argument(node, names::kDepthwiseWeight) >= 0) {
      return std::nullopt;
    }
    const int weight = argument(node, "weight");
    if (weight < 0 || pair_argument(node, "dilation", {1, 1}) != std::vector<int64_t>{1, 1}) return std::nullopt;
    const int32_t value = value_of_slot_[static_cast<size_t>(node.arg_slots[static_cast<size_t>(weight)])];
    if (value < 0) return std::nullopt;
    auto sizes = literal_sizes(value);
    if (!sizes || sizes->size() != 4) return std::nullopt;
    return sizes;
  }

  // The node whose result argument `input` of node m reads through the views its epilogue's
  // nodes became (appended to `views`), where that result and each view is read once, by the
  // next; -1 elsewhere, or where other nodes lie between it and m. `slot`: that result's.
  int64_t producer_through_views(const PlannedNode& node, size_t m, int input, std::vector<size_t>& views,
                                 int32_t& slot) const {
    slot = node.arg_slots[static_cast<size_t>(input)];
    int64_t n = -1;
    while (true) {
      if (reads_[static_cast<size_t>(slot)] != 1 || escapes_[static_cast<size_t>(slot)]) return -1;
      const int32_t value = value_of_slot_[static_cast<size_t>(slot)];
      if (value < 0 || plan_.values[static_cast<size_t>(value)].def_step < 0) return -1;
      n = plan_.values[static_cast<size_t>(value)].def_step;
      if (!absorbed_[static_cast<size_t>(n)]) break;
      views.push_back(static_cast<size_t>(n));
      slot = plan_.nodes[static_cast<size_t>(n)].arg_slots[0];
    }
    return static_cast<int64_t>(m) - n - 1 == static_cast<int64_t>(views.size()) ? n : -1;  // only the views between
  }

  // Whether a convolution's input slot holds a float32 4-D value.
  bool holds_float_image(int32_t slot) const {
    const int32_t x = value_of_slot_[static_cast<size_t>(slot)];
    return x >= 0 && plan_.values[static_cast<size_t>(x)].dtype == ScalarType::FLOAT32 &&
           plan_.values[static_cast<size_t>(x)].sizes.size() == 4;
  }

  // Whether a conv2d with weights of these sizes is depthwise: one input channel per group, a group
  // per output channel.
  bool depthwise_conv2d(const PlannedNode& node, const std::vector<int64_t>& weight) const {
    return weight.size() == 4 && weight[1] == 1 && int_argument(node, "groups", 1) == weight[0];
  }

  // Whether a conv2d with weights of these sizes is pointwise: 1x1, groups 1, stride 1, no padding
  // (an inverted-residual block's expansion and projection).
  bool pointwise_conv2d(const PlannedNode& node, const std::vector<int64_t>& weight) const {
    return weight.size() == 4 && weight[2] == 1 && weight[3] == 1 && int_argument(node, "groups", 1) == 1 &&
           pair_argument(node, "stride", {1, 1}) == std::vector<int64_t>{1, 1} &&
           pair_argument(node, "padding", {0, 0}) == std::vector<int64_t>{0, 0};
  }

  // The float32 bytes of the value a slot holds, where its sizes are literal; else -1.
  int64_t literal_bytes(int32_t slot) const {
    const auto sizes = literal_sizes(value_of_slot_[static_cast<size_t>(slot)]);
    if (!sizes) return -1;
    int64_t bytes = 4;
    for (int64_t d : *sizes) bytes *= d;
    return bytes;
  }

  // Node m takes over node n (its input's producer, through `views`): m reads n's input `x_slot`
  // in place of n's result, and n's arguments named as in `renamed` under m's names for them;
  // n and the views do nothing.
  void take_over(size_t m, int input, size_t n, const std::vector<size_t>& views, int32_t x_slot,
                 const std::vector<std::pair<std::string_view, std::string_view>>& renamed) {
    PlannedNode& node = plan_.nodes[m];
    const PlannedNode& producer = plan_.nodes[n];
    Moved moved;
    for (const auto& [own, as] : renamed) {
      const int index = argument(producer, own);
      if (index >= 0) moved.emplace_back(as, producer.arg_slots[static_cast<size_t>(index)]);
    }
    node.arg_slots[static_cast<size_t>(input)] = x_slot;
    std::vector<int32_t> read_later{x_slot};
    for (const auto& [name, moved_slot] : moved) {
      node.arg_names.emplace_back(name);
      node.arg_slots.push_back(moved_slot);
      read_later.push_back(moved_slot);
    }
    // What n read is read at m now: its memory lives until then.
    for (int32_t later : read_later) {
      const int32_t value = later < 0 ? -1 : value_of_slot_[static_cast<size_t>(later)];
      if (value < 0) continue;
      ValueInfo& info = plan_.values[static_cast<size_t>(value)];
      info.last_use = std::max(info.last_use, static_cast<int64_t>(m));
    }
    make_absorbed(plan_, *absorbed_kernel_, n);
    for (size_t view : views) make_absorbed(plan_, *absorbed_kernel_, view);
  }

  // n's batch norm and activation, renamed from its own names to `to`'s.
  static std::vector<std::pair<std::string_view, std::string_view>> epilogue_renamed(const names::EpilogueNames& to) {
    const names::EpilogueNames& own = names::kOwnEpilogue;
    return {{own.batch_norm_weight, to.batch_norm_weight}, {own.batch_norm_bias, to.batch_norm_bias},
            {own.batch_norm_mean, to.batch_norm_mean},     {own.batch_norm_var, to.batch_norm_var},
            {own.batch_norm_eps, to.batch_norm_eps},       {own.activation, to.activation},
            {own.activation_min, to.activation_min},       {own.activation_max, to.activation_max}};
  }

  // An inverted-residual block's expansion and depthwise convolution (convolution_epilogue.h's
  // kExpansionWeight): at `m` a depthwise conv2d written channels-last whose input is, through the
  // views its epilogue's nodes became, the result of a 1x1 conv2d at n (stride 1, no padding),
  // the nodes between being those views and that result read by nothing else. Node m then reads
  // n's input and computes the expansion itself; n and the views do nothing.
  void fuse_expansion(size_t m) {
    const PlannedNode& depthwise = plan_.nodes[m];
    const auto depthwise_weight = plain_channels_last_conv2d(depthwise);
    const int input = argument(depthwise, "input", true);
    if (!depthwise_weight || input < 0 || !depthwise_conv2d(depthwise, *depthwise_weight)) {
      return;
    }
    std::vector<size_t> views;
    int32_t slot = -1;
    const int64_t n = producer_through_views(depthwise, m, input, views, slot);
    if (n < 0) return;
    const PlannedNode& expansion = plan_.nodes[static_cast<size_t>(n)];
    const auto expansion_weight = plain_channels_last_conv2d(expansion);
    const int expansion_input = argument(expansion, "input", true);
    if (!expansion_weight || expansion_input < 0 || (*expansion_weight)[0] != (*depthwise_weight)[0] ||
        !pointwise_conv2d(expansion, *expansion_weight) ||
        single_result(expansion) != value_of_slot_[static_cast<size_t>(slot)]) {
      return;
    }
    // Only an expansion past the L2: a smaller one the depthwise node reads from the L2 as fast
    // apart, and fused its rows are too few for the pointwise tiles (mobilenet_v2's 14x14 blocks:
    // 0.85x).
    if (literal_bytes(slot) < kFusedExpansionBytes) return;
    const int32_t x_slot = expansion.arg_slots[static_cast<size_t>(expansion_input)];
    if (!holds_float_image(x_slot)) return;
    auto renamed = epilogue_renamed(names::kExpansionEpilogue);
    renamed.emplace_back("weight", names::kExpansionWeight);
    renamed.emplace_back("bias", names::kExpansionBias);
    take_over(m, input, static_cast<size_t>(n), views, x_slot, renamed);
  }

  // An inverted-residual block's depthwise convolution and projection (convolution_epilogue.h's
  // kDepthwiseWeight): at `m` a 1x1 conv2d written channels-last (stride 1, no padding, groups 1;
  // a residual of its own allowed) whose input is, through the views its epilogue's nodes
  // became, the result of a depthwise conv2d at n, written channels-last without an expansion,
  // the nodes between being those views and that result read by nothing else. Node m then reads
  // n's input and computes the depthwise convolution itself; n and the views do nothing.
  void fuse_depthwise(size_t m) {
    const PlannedNode& projection = plan_.nodes[m];
    if (!builtin_convolution(projection) || projection.target != "aten::conv2d.default" ||
        argument(projection, names::kChannelsLastOutput) < 0 || argument(projection, names::kInputScale) >= 0 ||
        argument(projection, names::kExpansionWeight) >= 0 || argument(projection, names::kDepthwiseWeight) >= 0) {
      return;
    }
    const int weight = argument(projection, "weight"), input = argument(projection, "input", true);
    if (weight < 0 || input < 0) return;
    const auto projection_weight = literal_sizes(value_of_slot_[static_cast<size_t>(projection.arg_slots[static_cast<size_t>(weight)])]);
    if (!projection_weight || !pointwise_conv2d(projection, *projection_weight) ||
        pair_argument(projection, "dilation", {1, 1}) != std::vector<int64_t>{1, 1}) {
      return;
    }
    std::vector<size_t> views;
    int32_t slot = -1;
    const int64_t n = producer_through_views(projection, m, input, views, slot);
    if (n < 0) return;
    const PlannedNode& depthwise = plan_.nodes[static_cast<size_t>(n)];
    const auto depthwise_weight = plain_channels_last_conv2d(depthwise);
    const int depthwise_input = argument(depthwise, "input", true);
    if (!depthwise_weight || depthwise_input < 0 || !depthwise_conv2d(depthwise, *depthwise_weight) ||
        (*depthwise_weight)[0] != (*projection_weight)[1] ||
        !pair_argument(depthwise, "stride", {1, 1}) || !pair_argument(depthwise, "padding", {0, 0}) ||
        single_result(depthwise) != value_of_slot_[static_cast<size_t>(slot)]) {
      return;
    }
    // Only a large depthwise result in wide rows (kFusedDepthwiseBytes): a smaller one the
    // projection reads from the L2 as fast apart.
    const auto convolved = literal_sizes(value_of_slot_[static_cast<size_t>(slot)]);
    if (literal_bytes(slot) < kFusedDepthwiseBytes || !convolved || convolved->size() != 4 ||
        (*convolved)[3] < kFusedDepthwiseWidth) {
      return;
    }
    const int32_t x_slot = depthwise.arg_slots[static_cast<size_t>(depthwise_input)];
    if (!holds_float_image(x_slot)) return;
    auto renamed = epilogue_renamed(names::kDepthwiseEpilogue);
    renamed.emplace_back("weight", names::kDepthwiseWeight);
    renamed.emplace_back("bias", names::kDepthwiseBias);
    renamed.emplace_back("stride", names::kDepthwiseStride);
    renamed.emplace_back("padding", names::kDepthwisePadding);
    take_over(m, input, static_cast<size_t>(n), views, x_slot, renamed);
  }

  void mark_channels_last(PlannedNode& node) {
    if (argument(node, names::kChannelsLastOutput) >= 0) return;
    node.arg_names.emplace_back(names::kChannelsLastOutput);
    node.arg_slots.push_back(constant_slot(RuntimeValue{true}));
  }

  ExecutionPlan& plan_;
  const KernelRegistry& registry_;
  std::vector<bool> absorbed_;  // by node: made a view of a convolution's result
  KernelInfo fused_;
  const KernelInfo* alias_ = nullptr;
  const KernelInfo* absorbed_kernel_ = nullptr;  // fused_chains.h's: the expansion's nodes
  std::string fused_origin_;
  std::vector<int32_t> value_of_slot_;
  std::vector<int32_t> constant_of_slot_;  // index into plan_.constants, -1: none
  std::vector<int> reads_;
  std::vector<bool> escapes_;
};

}  // namespace

void fuse_convolution_epilogues(ExecutionPlan& plan, const KernelRegistry& registry) { Fusion(plan, registry).run(); }

}  // namespace nrt::exec

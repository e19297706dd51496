#include "executor/kernels/cpu/onednn_kept_weights.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <tuple>
#include <utility>

#include "executor/kernels/cpu/channels_last_depthwise.h"
#include "executor/kernels/cpu/kept_by_storage.h"

namespace nrt::exec::cpu {
namespace {

// By weight address and WeightLayout::id, not by primitive: a program run at several sequence
// lengths packs each weight once (keyed by primitive, it kept a copy per length, up to the bound,
// and read the file's pages back for each). At most 1 GiB.
using KeptWeights = KeptByStorage<std::pair<const float*, uint64_t>, LaidOutWeights, 1>;

KeptWeights& kept_weights_table() {
  static KeptWeights kept(size_t{1} << 30);
  return kept;
}

LaidOutWeights reordered_weights(const WeightLayout& layout, const float* weight) {
  dnnl::engine& engine = onednn_engine();
  const size_t bytes = (layout.chosen.get_size() + 63) / 64 * 64 + layout.trailing_bytes;
  std::shared_ptr<void> buffer(std::aligned_alloc(64, bytes), std::free);
  if (!buffer) throw std::bad_alloc();
  std::memset(buffer.get(), 0, bytes);  // the trailing pages present, not only reserved
  dnnl::memory from(layout.user, engine, const_cast<float*>(weight));  // read only
  dnnl::memory to(layout.chosen, engine, buffer.get());
  dnnl::stream stream(engine);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
  return {std::move(buffer), to};
}

}  // namespace

dnnl::engine& onednn_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::primitive_attr onednn_attributes() {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attributes;
}

dnnl::memory onednn_scratchpad(const dnnl::memory::desc& desc) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  const size_t wanted = desc.get_size();
  if (wanted > buffer.bytes) {
    std::free(buffer.data);
    buffer.bytes = 0;
    buffer.data = std::aligned_alloc(64, (wanted + 63) / 64 * 64);
    if (buffer.data == nullptr) throw std::bad_alloc();
    buffer.bytes = wanted;
  }
  return dnnl::memory(desc, onednn_engine(), wanted == 0 ? nullptr : buffer.data);
}

float* scratch_floats(int64_t count) {
  const dnnl::memory::desc desc({count}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x);
  return static_cast<float*>(onednn_scratchpad(desc).get_data_handle());
}

WeightLayout weight_layout(const dnnl::memory::desc& user, const dnnl::memory::desc& chosen, size_t trailing_bytes) {
  // The descriptors are plain data (oneDNN 2.6's dnnl_memory_desc_t): equal bytes, equal layouts.
  std::string bytes(sizeof user.data + sizeof chosen.data + sizeof trailing_bytes, '\0');
  std::memcpy(bytes.data(), &user.data, sizeof user.data);
  std::memcpy(bytes.data() + sizeof user.data, &chosen.data, sizeof chosen.data);
  std::memcpy(bytes.data() + sizeof user.data + sizeof chosen.data, &trailing_bytes, sizeof trailing_bytes);
  static std::mutex mutex;
  static std::map<std::string, uint64_t> ids;
  std::lock_guard<std::mutex> lock(mutex);
  const uint64_t id = ids.emplace(std::move(bytes), ids.size()).first->second;
  return {user, chosen, trailing_bytes, id};
}

LaidOutWeights kept_weights(const WeightLayout& layout, const float* weight, const std::shared_ptr<const Storage>& storage) {
  const auto key = std::make_pair(weight, layout.id);
  KeptWeights& kept = kept_weights_table();
  if (auto found = kept.find(key, {storage})) return *found;
  bool now_kept = false;
  LaidOutWeights laid_out = kept.keep(key, {storage}, reordered_weights(layout, weight),
                                      layout.chosen.get_size() + layout.trailing_bytes, &now_kept);
  // The copy serves every later call: the file's pages of these weights need not stay resident.
  if (now_kept && storage) storage->release_pages(weight, layout.user.get_size());
  return laid_out;
}

size_t kept_weights_bytes() { return kept_weights_table().bytes(); }

namespace {

// The layout from `user` to `chosen` of float32 weights of `dims`, made once per (dims, tags).
// Handed out by reference (map entries stay put): its two descriptors are 696 bytes each here,
// and copying them on every call put 0.84% of efficientnet_b0_64's samples here (0.36% now).
const WeightLayout& layout_of(const dnnl::memory::dims& dims, dnnl::memory::format_tag user, dnnl::memory::format_tag chosen) {
  static std::mutex mutex;
  static std::map<std::tuple<dnnl::memory::dims, dnnl::memory::format_tag, dnnl::memory::format_tag>, WeightLayout> layouts;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(dims, user, chosen);
  auto found = layouts.find(key);
  if (found == layouts.end()) {
    const auto f32 = dnnl::memory::data_type::f32;
    found = layouts.emplace(key, weight_layout(dnnl::memory::desc(dims, f32, user), dnnl::memory::desc(dims, f32, chosen))).first;
  }
  return found->second;
}

}  // namespace

LaidOutWeights pointwise_packed_weights(int64_t out, int64_t in, const float* weight,
                                       const std::shared_ptr<const Storage>& weight_storage) {
  return tap_major_packed_weights(out, in, 1, weight, weight_storage);
}

LaidOutWeights tap_major_packed_weights(int64_t out, int64_t in, int64_t taps, const float* weight,
                                        const std::shared_ptr<const Storage>& weight_storage) {
  using Tag = dnnl::memory::format_tag;
  return kept_weights(layout_of({out, in, 1, taps}, Tag::oihw, Tag::Acdb16a), weight, weight_storage);
}

LaidOutWeights depthwise_kept_taps(int64_t channels, int64_t taps, const float* weight,
                                   const std::shared_ptr<const Storage>& weight_storage) {
  using Tag = dnnl::memory::format_tag;
  return kept_weights(layout_of({channels, taps}, Tag::ab, Tag::ba), weight, weight_storage);
}

DepthwiseTaps::DepthwiseTaps(int64_t channels, int64_t kh, int64_t kw, const float* weight,
                             const std::shared_ptr<const Storage>& weight_storage) {
  if (weight_storage != nullptr) {
    try {
      kept_ = depthwise_kept_taps(channels, kh * kw, weight, weight_storage);
      return;
    } catch (const dnnl::error&) {
    }
  }
  transposed_.resize(static_cast<size_t>(channels * kh * kw));
  depthwise_taps(weight, channels, kh, kw, transposed_.data());
}

}  // namespace nrt::exec::cpu

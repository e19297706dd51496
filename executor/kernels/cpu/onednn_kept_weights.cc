#include "executor/kernels/cpu/onednn_kept_weights.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "executor/kernels/cpu/kept_by_storage.h"

namespace nrt::exec::cpu {
namespace {

// By primitive and weight address; at most 1 GiB.
using KeptWeights = KeptByStorage<std::pair<const void*, const float*>, LaidOutWeights, 1>;

LaidOutWeights reordered_weights(const dnnl::memory::desc& user, const dnnl::memory::desc& chosen, const float* weight,
                                 size_t trailing_bytes) {
  dnnl::engine& engine = onednn_engine();
  const size_t bytes = (chosen.get_size() + 63) / 64 * 64 + trailing_bytes;
  std::shared_ptr<void> buffer(std::aligned_alloc(64, bytes), std::free);
  if (!buffer) throw std::bad_alloc();
  std::memset(buffer.get(), 0, bytes);  // the trailing pages present, not only reserved
  dnnl::memory from(user, engine, const_cast<float*>(weight));  // read only
  dnnl::memory to(chosen, engine, buffer.get());
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

LaidOutWeights kept_weights(const void* primitive, const dnnl::memory::desc& user, const dnnl::memory::desc& chosen,
                            const float* weight, const std::shared_ptr<const Storage>& storage,
                            size_t trailing_bytes) {
  static KeptWeights kept(size_t{1} << 30);
  const auto key = std::make_pair(primitive, weight);
  if (auto found = kept.find(key, {storage})) return *found;
  bool now_kept = false;
  LaidOutWeights laid_out = kept.keep(key, {storage}, reordered_weights(user, chosen, weight, trailing_bytes),
                                      chosen.get_size() + trailing_bytes, &now_kept);
  // The copy serves every later call: the file's pages of these weights need not stay resident.
  if (now_kept) storage->release_pages(weight, user.get_size());
  return laid_out;
}

}  // namespace nrt::exec::cpu

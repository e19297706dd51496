#include "executor/kernels/cpu/onednn_kept_weights.h"

#include <cstdlib>
#include <map>
#include <new>
#include <mutex>
#include <utility>

namespace nrt::exec::cpu {
namespace {

constexpr size_t kKeptWeightBytes = size_t{1} << 30;

struct KeptWeights {
  std::weak_ptr<const Storage> storage;
  dnnl::memory reordered;
  size_t bytes = 0;
};

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

std::optional<dnnl::memory> kept_weights(const void* primitive, const dnnl::memory::desc& user,
                                         const dnnl::memory::desc& chosen, const float* weight,
                                         const std::shared_ptr<const Storage>& storage) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, const float*>, KeptWeights> kept;
  static size_t kept_bytes = 0;
  const auto key = std::make_pair(primitive, weight);
  const size_t bytes = chosen.get_size();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = kept.find(key);
    if (found != kept.end()) {
      if (found->second.storage.lock() == storage) return found->second.reordered;
      kept_bytes -= found->second.bytes;
      kept.erase(found);
    }
    for (auto it = kept.begin(); it != kept.end();) {  // what programs since unloaded left behind
      if (it->second.storage.expired()) {
        kept_bytes -= it->second.bytes;
        it = kept.erase(it);
      } else {
        ++it;
      }
    }
    if (kept_bytes + bytes > kKeptWeightBytes) return std::nullopt;
  }
  dnnl::engine& engine = onednn_engine();
  KeptWeights entry{storage, dnnl::memory(chosen, engine), bytes};
  dnnl::memory from(user, engine, const_cast<float*>(weight));  // read only
  dnnl::stream stream(engine);
  dnnl::reorder(from, entry.reordered).execute(stream, from, entry.reordered);
  stream.wait();
  std::lock_guard<std::mutex> lock(mutex);
  auto [at, inserted] = kept.emplace(key, entry);
  if (inserted) kept_bytes += entry.bytes;
  return at->second.reordered;
}

}  // namespace nrt::exec::cpu

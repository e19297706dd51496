#include "serializer/weights_hash.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

namespace nrt {
namespace {

struct Chunk {
  uint32_t storage;
  uint64_t offset;
  uint64_t size;
};

}  // namespace

WeightsDigests hash_weights(const ProgramFile& file, const WeightsHashOptions& options) {
  const fb::Program& program = file.program();
  const uint32_t num_storages = program.storages() ? program.storages()->size() : 0;

  // Work list of fixed-size chunks; each chunk's digest lands in its slot.
  std::vector<Chunk> chunks;
  std::vector<size_t> first_chunk(num_storages + 1, 0);
  uint64_t total = 0;
  for (uint32_t s = 0; s < num_storages; ++s) {
    first_chunk[s] = chunks.size();
    const uint64_t size = program.storages()->Get(s)->size();
    total += size;
    uint64_t offset = 0;
    do {  // an empty storage still gets one (empty) chunk
      chunks.push_back({s, offset, std::min(kWeightHashChunkBytes, size - offset)});
      offset += kWeightHashChunkBytes;
    } while (offset < size);
  }
  first_chunk[num_storages] = chunks.size();

  std::vector<Digest> chunk_digests(chunks.size());
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, chunks.size()));
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::atomic<unsigned> running{threads};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < chunks.size(); i = next.fetch_add(1)) {
      const auto bytes = file.storage_bytes(chunks[i].storage).subspan(chunks[i].offset, chunks[i].size);
      chunk_digests[i] = digest_of(options.algorithm, bytes);
      done.fetch_add(chunks[i].size, std::memory_order_relaxed);
    }
    running.fetch_sub(1);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  if (options.progress) {
    while (running.load() > 0) {
      options.progress(done.load(), total);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    options.progress(total, total);
  }
  for (auto& t : pool) t.join();

  WeightsDigests out;
  for (uint32_t s = 0; s < num_storages; ++s) {
    StreamHasher h(options.algorithm);
    h.u64(program.storages()->Get(s)->size());
    for (size_t c = first_chunk[s]; c < first_chunk[s + 1]; ++c) h.digest(chunk_digests[c]);
    out.storages.push_back(h.finish());
  }

  // Weights in fqn order; storages numbered by first use in that order.
  std::vector<const fb::WeightTensor*> weights;
  if (program.weights()) weights.assign(program.weights()->begin(), program.weights()->end());
  std::sort(weights.begin(), weights.end(),
            [](auto* a, auto* b) { return a->fqn()->string_view() < b->fqn()->string_view(); });
  std::map<uint32_t, uint64_t> canonical_storage;
  std::vector<uint32_t> storage_order;
  for (const auto* w : weights) {
    if (canonical_storage.emplace(w->storage(), storage_order.size()).second) storage_order.push_back(w->storage());
  }
  // Storages no weight uses still count (their bytes are in the file), ordered by content.
  std::vector<uint32_t> unused;
  for (uint32_t s = 0; s < num_storages; ++s) {
    if (!canonical_storage.count(s)) unused.push_back(s);
  }
  std::sort(unused.begin(), unused.end(), [&](uint32_t a, uint32_t b) { return out.storages[a] < out.storages[b]; });
  storage_order.insert(storage_order.end(), unused.begin(), unused.end());

  StreamHasher h(options.algorithm);
  h.u64(weights.size());
  auto dim = [&h](const fb::SymDim* d) {
    if (d == nullptr) {
      h.i64(0);
      return;
    }
    h.i64(d->literal());  // weights have literal views (verified)
  };
  for (const auto* w : weights) {
    h.str(w->fqn()->string_view());
    h.u64(w->is_parameter());
    const auto* m = w->meta();
    h.i64(static_cast<int64_t>(m->dtype()));
    h.u64(m->sizes() ? m->sizes()->size() : 0);
    if (m->sizes()) {
      for (const auto* d : *m->sizes()) dim(d);
    }
    h.u64(m->strides() ? m->strides()->size() : 0);
    if (m->strides()) {
      for (const auto* d : *m->strides()) dim(d);
    }
    dim(m->storage_offset());
    h.u64(canonical_storage[w->storage()]);
    // A local shard's coordinate; hashed only where present, so digests of files without one
    // stay as they were.
    if (w->shard_coordinate() != nullptr && w->shard_coordinate()->size() != 0) {
      h.str("shard_coordinate");
      h.u64(w->shard_coordinate()->size());
      for (int64_t c : *w->shard_coordinate()) h.i64(c);
    }
  }
  h.u64(storage_order.size());
  for (uint32_t s : storage_order) h.digest(out.storages[s]);
  out.weights = h.finish();
  return out;
}

}  // namespace nrt

#include "executor/kernels/cpu/draw_runs.h"

#include <string>

namespace nrt::exec::cpu {

Result<std::vector<DrawRun>> draw_runs(const KernelContext& ctx, const std::vector<int64_t>& local_sizes) {
  int64_t numel = 1;
  for (int64_t s : local_sizes) numel *= s;
  const RuntimeValue* global_value = ctx.find(kDrawGlobalSizesArg, -1);
  if (global_value == nullptr || std::holds_alternative<std::monostate>(*global_value)) {
    if (numel == 0) return std::vector<DrawRun>{};
    return std::vector<DrawRun>{{0, numel, 0}};
  }
  NRT_TRY(global, ctx.int_list(kDrawGlobalSizesArg, -1));
  NRT_TRY(encoded, ctx.int_list(kDrawShardPiecesArg, -1));
  const size_t rank = local_sizes.size();
  if (global->size() != rank) return ctx.error("a sharded draw's global sizes do not match its output's rank");
  // Per dim, the global index of each local index.
  std::vector<std::vector<int64_t>> global_index(rank);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> last_pieces;
  size_t at = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (at >= encoded->size()) return ctx.error("a sharded draw's shard pieces are truncated");
    const int64_t pieces = (*encoded)[at++];
    if (pieces < 0 || static_cast<size_t>(pieces) > (encoded->size() - at) / 2) {
      return ctx.error("a sharded draw's shard pieces are malformed");
    }
    for (int64_t p = 0; p < pieces; ++p) {
      const int64_t offset = (*encoded)[at++], size = (*encoded)[at++];
      if (offset < 0 || size < 0 || offset > (*global)[d] - size) {
        return ctx.error("a sharded draw's piece [" + std::to_string(offset) + ", +" + std::to_string(size) +
                         ") lies outside dim " + std::to_string(d) + " of " + std::to_string((*global)[d]));
      }
      for (int64_t i = 0; i < size; ++i) global_index[d].push_back(offset + i);
    }
    if (static_cast<int64_t>(global_index[d].size()) != local_sizes[d]) {
      return ctx.error("a sharded draw's pieces of dim " + std::to_string(d) + " hold " +
                       std::to_string(global_index[d].size()) + " elements, its output " +
                       std::to_string(local_sizes[d]));
    }
  }
  std::vector<DrawRun> runs;
  if (numel == 0) return runs;
  if (rank == 0) return std::vector<DrawRun>{{0, 1, 0}};
  std::vector<int64_t> global_stride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) global_stride[d - 1] = global_stride[d] * (*global)[d];
  // Row by row (every dim but the last), a run per stretch of consecutive global indices.
  const int64_t row = local_sizes[rank - 1];
  const std::vector<int64_t>& last = global_index[rank - 1];
  std::vector<int64_t> index(rank, 0);
  for (int64_t local = 0; local < numel; local += row) {
    int64_t base = 0;
    for (size_t d = 0; d + 1 < rank; ++d) base += global_index[d][static_cast<size_t>(index[d])] * global_stride[d];
    for (int64_t j = 0; j < row;) {
      int64_t k = j + 1;
      while (k < row && last[static_cast<size_t>(k)] == last[static_cast<size_t>(k - 1)] + 1) ++k;
      runs.push_back({base + last[static_cast<size_t>(j)], k - j, local + j});
      j = k;
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < local_sizes[d]) break;
      index[d] = 0;
    }
  }
  return runs;
}

}  // namespace nrt::exec::cpu

#include "executor/dtensor/redistribute.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "executor/dtensor/shard_layout.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::dist {
namespace {

using exec::ProcessGroup;
using exec::Tensor;

// `t` with dim `d` moved to the front (a view).
Tensor move_to_front(const Tensor& t, int64_t d) {
  std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
  std::rotate(sizes.begin(), sizes.begin() + d, sizes.begin() + d + 1);
  std::rotate(strides.begin(), strides.begin() + d, strides.begin() + d + 1);
  return t.as_strided(sizes, strides, t.storage_offset());
}

// The inverse of move_to_front (a view).
Tensor move_from_front(const Tensor& t, int64_t d) {
  std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
  std::rotate(sizes.begin(), sizes.begin() + 1, sizes.begin() + d + 1);
  std::rotate(strides.begin(), strides.begin() + 1, strides.begin() + d + 1);
  return t.as_strided(sizes, strides, t.storage_offset());
}

// Elements [start, start+length) of dim d (a view).
Tensor narrow(const Tensor& t, int64_t d, int64_t start, int64_t length) {
  std::vector<int64_t> sizes = t.sizes();
  sizes[static_cast<size_t>(d)] = length;
  return t.as_strided(sizes, t.strides(), t.storage_offset() + start * t.strides()[static_cast<size_t>(d)]);
}

Tensor zeros(exec::ScalarType dtype, std::vector<int64_t> sizes) {
  Tensor t = Tensor::empty(dtype, std::move(sizes));
  if (t.nbytes()) std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

Error step_error(const ProcessGroup& group, const Placement& from, const Placement& to, const std::string& why) {
  return make_error(ErrorCode::CollectiveFailed, "redistribute " + to_string(from) + " -> " + to_string(to) +
                                                     " on process group '" + group.name() + "': " + why);
}

Status issued(const ProcessGroup& group, const Placement& from, const Placement& to, exec::WorkResult work) {
  Status s = exec::wait_for(std::move(work));
  if (!s.ok()) {
    Error e = step_error(group, from, to, s.error().message);
    if (s.error().code == ErrorCode::CollectiveTimeout || s.error().code == ErrorCode::NanInCollective) {
      e.code = s.error().code;
    }
    return e;
  }
  return {};
}

// `t` with `chunks` of dim d (ranges of it) concatenated in order, as a new contiguous tensor.
Result<Tensor> concatenated(const Tensor& t, int64_t d, const std::vector<ChunkRange>& chunks) {
  std::vector<int64_t> sizes = t.sizes();
  sizes[static_cast<size_t>(d)] = 0;
  for (const ChunkRange& c : chunks) sizes[static_cast<size_t>(d)] += c.size;
  Tensor out = Tensor::empty(t.dtype(), sizes);
  int64_t at = 0;
  for (const ChunkRange& c : chunks) {
    if (c.size == 0) continue;
    NRT_RETURN_IF_ERROR(exec::copy_elements(narrow(t, d, c.offset, c.size), narrow(out, d, at, c.size)));
    at += c.size;
  }
  return out;
}

// Shard(d) or _StridedShard(d, sf) -> Replicate: every rank's chunks (dim d moved first) padded
// to the largest holding (ceil(E/n) for Shard), gathered, and each chunk put back where it lies.
Result<Tensor> gather_shards(const Tensor& local, const Placement& from, int64_t extent, ProcessGroup& group,
                             const Placement& to) {
  const int64_t n = group.size(), d = from.dim;
  std::vector<std::vector<ChunkRange>> held;
  int64_t c = 0;
  for (int64_t r = 0; r < n; ++r) {
    held.push_back(held_chunks(from, extent, n, r));
    int64_t size = 0;
    for (const ChunkRange& chunk : held.back()) size += chunk.size;
    c = std::max(c, size);
  }
  Tensor front = move_to_front(local, d);
  std::vector<int64_t> padded_sizes = front.sizes();
  padded_sizes[0] = c;
  Tensor send = zeros(local.dtype(), padded_sizes);
  NRT_RETURN_IF_ERROR(exec::copy_elements(front, narrow(send, 0, 0, front.sizes()[0])));
  std::vector<int64_t> gathered_sizes = padded_sizes;
  gathered_sizes[0] = c * n;
  Tensor gathered = Tensor::empty(local.dtype(), gathered_sizes);
  NRT_RETURN_IF_ERROR(issued(group, from, to, group.all_gather_into_tensor(send, gathered)));
  std::vector<int64_t> out_sizes = local.sizes();
  out_sizes[static_cast<size_t>(d)] = extent;
  Tensor out = Tensor::empty(local.dtype(), out_sizes);
  Tensor out_front = move_to_front(out, d);
  for (int64_t r = 0; r < n; ++r) {
    int64_t at = r * c;
    for (const ChunkRange& chunk : held[static_cast<size_t>(r)]) {
      if (chunk.size == 0) continue;
      NRT_RETURN_IF_ERROR(exec::copy_elements(narrow(gathered, 0, at, chunk.size),
                                              narrow(out_front, 0, chunk.offset, chunk.size)));
      at += chunk.size;
    }
  }
  return out;
}

// Partial -> Shard(d): the tensor padded to n*c rows along d, reduce-scattered, unpadded.
Result<Tensor> scatter_partial(const Tensor& local, int64_t d, ProcessGroup& group, const Placement& from,
                               const Placement& to) {
  const int64_t n = group.size();
  const int64_t extent = local.sizes()[static_cast<size_t>(d)];
  const int64_t c = padded_chunk(extent, n);
  Tensor front = move_to_front(local, d);
  std::vector<int64_t> padded_sizes = front.sizes();
  padded_sizes[0] = c * n;
  Tensor send = zeros(local.dtype(), padded_sizes);
  NRT_RETURN_IF_ERROR(exec::copy_elements(front, narrow(send, 0, 0, extent)));
  std::vector<int64_t> received_sizes = padded_sizes;
  received_sizes[0] = c;
  Tensor received = Tensor::empty(local.dtype(), received_sizes);
  NRT_RETURN_IF_ERROR(issued(group, from, to, group.reduce_scatter_tensor(send, received, from.reduce_op)));
  const ChunkRange mine = chunk_range(extent, n, group.rank());
  return exec::contiguous_copy(move_from_front(narrow(received, 0, 0, mine.size), d));
}

// `flat` (1-D) from element `offset` on, viewed as a contiguous tensor of `sizes`.
Tensor contiguous_view(const Tensor& flat, const std::vector<int64_t>& sizes, int64_t offset) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return flat.as_strided(sizes, strides, flat.storage_offset() + offset);
}

int64_t element_count(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Shard(i) -> Shard(j): one all_to_all. Rank r receives from every rank the part of that rank's
// shard (along i) that lies in r's new shard (along j): exact sizes, no padding.
Result<Tensor> swap_shard_dim(const Tensor& local, int64_t i, int64_t j, const std::vector<int64_t>& region_sizes,
                              ProcessGroup& group, const Placement& from, const Placement& to) {
  const int64_t n = group.size(), me = group.rank();
  const int64_t extent_i = region_sizes[static_cast<size_t>(i)], extent_j = local.sizes()[static_cast<size_t>(j)];
  const ChunkRange mine_j = chunk_range(extent_j, n, me);
  std::vector<int64_t> send_splits, receive_splits;
  std::vector<std::vector<int64_t>> send_blocks, receive_blocks;
  std::vector<int64_t> out_sizes = local.sizes();
  out_sizes[static_cast<size_t>(i)] = extent_i;
  out_sizes[static_cast<size_t>(j)] = mine_j.size;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<int64_t> sent = local.sizes(), received = out_sizes;
    sent[static_cast<size_t>(j)] = chunk_range(extent_j, n, r).size;
    received[static_cast<size_t>(i)] = chunk_range(extent_i, n, r).size;
    send_splits.push_back(element_count(sent));
    receive_splits.push_back(element_count(received));
    send_blocks.push_back(std::move(sent));
    receive_blocks.push_back(std::move(received));
  }
  int64_t total_send = 0, total_receive = 0;
  for (int64_t r = 0; r < n; ++r) total_send += send_splits[static_cast<size_t>(r)];
  for (int64_t r = 0; r < n; ++r) total_receive += receive_splits[static_cast<size_t>(r)];
  Tensor send = Tensor::empty(local.dtype(), {total_send});
  int64_t offset = 0;
  for (int64_t r = 0; r < n; ++r) {
    const ChunkRange part = chunk_range(extent_j, n, r);
    NRT_RETURN_IF_ERROR(exec::copy_elements(narrow(local, j, part.offset, part.size),
                                            contiguous_view(send, send_blocks[static_cast<size_t>(r)], offset)));
    offset += send_splits[static_cast<size_t>(r)];
  }
  Tensor received = Tensor::empty(local.dtype(), {total_receive});
  NRT_RETURN_IF_ERROR(issued(group, from, to, group.all_to_all_single(send, received, receive_splits, send_splits)));
  Tensor out = Tensor::empty(local.dtype(), out_sizes);
  offset = 0;
  for (int64_t r = 0; r < n; ++r) {
    const ChunkRange part = chunk_range(extent_i, n, r);
    NRT_RETURN_IF_ERROR(exec::copy_elements(contiguous_view(received, receive_blocks[static_cast<size_t>(r)], offset),
                                            narrow(out, i, part.offset, part.size)));
    offset += receive_splits[static_cast<size_t>(r)];
  }
  return out;
}

// Replicate -> Partial(op): rank 0 keeps the value; the others hold op's identity where the op
// has one that is not the value itself.
Result<Tensor> partition_value(const Tensor& local, ReduceOp op, int64_t group_rank) {
  Tensor out = exec::contiguous_copy(local);
  if (group_rank == 0 || op == ReduceOp::AVG || op == ReduceOp::MAXIMUM || op == ReduceOp::MINIMUM) return out;
  if (op == ReduceOp::SUM) {
    if (out.nbytes()) std::memset(out.raw_data(), 0, out.nbytes());
    return out;
  }
  return make_error(ErrorCode::NotSupported,
                    std::string("Replicate -> Partial(") + reduce_op_name(op) + ") is not supported (sum, avg, max, min)");
}

}  // namespace

Result<std::vector<RedistributeStep>> plan_redistribute(const Placements& src, const Placements& dst) {
  if (src.size() != dst.size()) {
    return make_error(ErrorCode::InvalidArgument, "redistribute " + to_string(src) + " -> " + to_string(dst) +
                                                      ": the placements differ in length");
  }
  size_t first = 0;
  while (first < src.size() && src[first] == dst[first]) ++first;
  std::vector<RedistributeStep> steps;
  Placements current = src;
  auto add = [&](size_t i, const Placement& to) {
    // A shard becomes partial through the whole value: gathered, then kept on group rank 0 (torch's
    // redistribute refuses Shard -> Partial; a rule wanting a partial operand, a bias beside a
    // rowwise weight, gets it this way).
    if (!current[i].is_replicate() && !current[i].is_partial() && to.is_partial()) {
      RedistributeStep gather{static_cast<int64_t>(i), current[i], Placement::replicate(), current, current};
      gather.after[i] = Placement::replicate();
      current[i] = Placement::replicate();
      steps.push_back(std::move(gather));
    }
    RedistributeStep step{static_cast<int64_t>(i), current[i], to, current, current};
    step.after[i] = to;
    current[i] = to;
    steps.push_back(std::move(step));
  };
  if (first == src.size()) return steps;
  // Undo what the dims after `first` hold (a Partial that stays is partial over any region).
  for (size_t i = src.size() - 1; i > first; --i) {
    if (current[i].is_replicate() || (current[i].is_partial() && current[i] == dst[i])) continue;
    add(i, Placement::replicate());
  }
  add(first, dst[first]);
  for (size_t i = first + 1; i < dst.size(); ++i) {
    if (current[i] != dst[i]) add(i, dst[i]);
  }
  return steps;
}

const char* step_collective(const RedistributeStep& step) {
  if (step.from.kind == Placement::Kind::kShard && step.to.kind == Placement::Kind::kShard && step.from.dim != step.to.dim) {
    return "all_to_all";
  }
  if (step.from.is_shard() && step.to.is_shard()) return "all_gather";  // to or from a strided shard: through Replicate
  if (step.from.is_shard() && step.to.is_replicate()) return "all_gather";
  if (step.from.is_partial() && step.to.is_replicate()) return "all_reduce";
  if (step.from.is_partial() && step.to.is_shard()) return "reduce_scatter";
  return "none";
}

Result<Tensor> redistribute_step(const Tensor& local, const Placement& from, const Placement& to,
                                 const std::vector<int64_t>& region_sizes, ProcessGroup& group) {
  if (from == to) return exec::contiguous_copy(local);
  if (static_cast<int64_t>(region_sizes.size()) != local.dim()) {
    return step_error(group, from, to, "the region has " + std::to_string(region_sizes.size()) +
                                           " dims, the tensor " + local.type_string());
  }
  for (const Placement* p : {&from, &to}) {
    if (p->is_shard() && (p->dim < 0 || p->dim >= local.dim())) {
      return step_error(group, from, to, "shard dim outside " + local.type_string());
    }
  }
  if (from.is_shard() && to.is_partial()) return step_error(group, from, to, "a shard is not a partial value");
  if (from.is_shard() && to.is_replicate()) {
    return gather_shards(local, from, region_sizes[static_cast<size_t>(from.dim)], group, to);
  }
  if (from.is_partial() && to.is_replicate()) {
    Tensor out = exec::contiguous_copy(local);
    NRT_RETURN_IF_ERROR(issued(group, from, to, group.all_reduce(out, from.reduce_op)));
    return out;
  }
  if (from.is_partial() && to.kind == Placement::Kind::kShard) return scatter_partial(local, to.dim, group, from, to);
  if (from.is_replicate() && to.is_shard()) {  // this rank's chunks, no traffic
    const int64_t extent = local.sizes()[static_cast<size_t>(to.dim)];
    return concatenated(local, to.dim, held_chunks(to, extent, group.size(), group.rank()));
  }
  if (from.is_replicate() && to.is_partial()) return partition_value(local, to.reduce_op, group.rank());
  if (from.kind == Placement::Kind::kShard && to.kind == Placement::Kind::kShard && from.dim != to.dim) {
    return swap_shard_dim(local, from.dim, to.dim, region_sizes, group, from, to);
  }
  // Partial(a) -> Partial(b), and to or from a strided shard otherwise: through Replicate.
  NRT_TRY(whole, redistribute_step(local, from, Placement::replicate(), region_sizes, group));
  return redistribute_step(*whole, Placement::replicate(), to, region_sizes, group);
}

Result<Tensor> redistribute(const Tensor& local, const std::vector<int64_t>& global_sizes, const Placements& src,
                            const Placements& dst, const std::vector<int64_t>& mesh_shape,
                            const std::vector<int64_t>& coordinate, std::span<ProcessGroup* const> groups) {
  NRT_TRY(steps, plan_redistribute(src, dst));
  Tensor current = local;
  for (const RedistributeStep& step : *steps) {
    NRT_TRY(region, shard_region(global_sizes, step.before, mesh_shape, coordinate, step.mesh_dim));
    ProcessGroup* group = groups[static_cast<size_t>(step.mesh_dim)];
    if (group == nullptr) {
      return make_error(ErrorCode::CollectiveFailed,
                        "redistribute: no process group for mesh dim " + std::to_string(step.mesh_dim));
    }
    NRT_TRY(next, redistribute_step(current, step.from, step.to, region->sizes, *group));
    current = std::move(*next);
  }
  return steps->empty() ? exec::contiguous_copy(local) : current;
}

Result<Tensor> local_from_global(const Tensor& global, const Placements& placements,
                                 const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& coordinate) {
  NRT_TRY(region, shard_region(global.sizes(), placements, mesh_shape, coordinate));
  Tensor view = global;
  for (int64_t d = 0; d < global.dim(); ++d) {
    const auto& pieces = region->pieces[static_cast<size_t>(d)];
    if (pieces.size() <= 1) {
      view = narrow(view, d, region->offsets[static_cast<size_t>(d)], region->sizes[static_cast<size_t>(d)]);
    } else {  // a strided shard: its chunks, in order
      NRT_TRY(joined, concatenated(view, d, pieces));
      view = std::move(*joined);
    }
  }
  Tensor out = exec::contiguous_copy(view);
  for (size_t i = 0; i < placements.size(); ++i) {
    if (!placements[i].is_partial()) continue;
    NRT_TRY(part, partition_value(out, placements[i].reduce_op, coordinate[i]));
    out = std::move(*part);
  }
  return out;
}

}  // namespace nrt::dist

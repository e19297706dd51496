// argmax/argmin and max.dim/min.dim over a dim sharded across a process group, without gathering
// the tensor: each rank reduces its shard to (value, global index) per output element, the
// ranks exchange those pairs (one all_gather of O(group size) records per output element), and
// every rank combines them by torch's rules:
//   - the first occurrence wins on ties, across shards too (shards are in rank order, so the
//     lower rank's candidate wins a tie);
//   - NaN is the maximum, and for argmin/min the minimum too: the first NaN wins;
//   - bool compares as integers (torch refuses bool argmax; nrt runs it);
//   - an empty shard contributes nothing; a dim empty on every rank is an error, as in torch.
// Floating values compare as doubles (exact for f16, bf16, f32, f64), integers as int64.
#pragma once

#include <cstdint>

#include "core/error.h"
#include "executor/comm/process_group.h"
#include "executor/runtime/tensor.h"

namespace nrt::dist {

struct ArgReduceResult {
  exec::Tensor values;   // the input's dtype
  exec::Tensor indices;  // int64, global indices along `dim`
};

// `local`: this rank's shard, sharded along `dim`; its elements along `dim` start at global index
// `offset`. `maximum`: argmax/max (else argmin/min). The outputs have `local`'s shape without
// `dim` (size 1 there with `keepdim`), the same on every rank.
Result<ArgReduceResult> sharded_arg_reduce(const exec::Tensor& local, int64_t dim, bool keepdim, bool maximum,
                                           int64_t offset, exec::ProcessGroup& group);

// Bytes this rank sends for an output of `outputs` elements of a `element_size`-byte dtype.
int64_t arg_reduce_bytes_sent(int64_t outputs, size_t element_size, int group_size);

}  // namespace nrt::dist

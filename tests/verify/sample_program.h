// A small program that touches every part of the format, for the verifier, robustness and fuzz
// tests. Tests mutate it one field at a time, so its layout is part of the contract:
//
//   operators   0 aten::linear  1 aten::relu  2 _c10d_functional::all_reduce
//               3 higher_order::invoke_subgraph  4 aten::add
//   meshes      0 'dp_tp' shape [2,2], dim_names [dp,tp], ranks [0,1,2,3]
//   groups      0 'tp0' ranks [0,1], mesh 0 dim 1     1 'world' ranks [0,1,2,3], no mesh
//   storages    0: 128 bytes (f32 [4,8])              1: 16 bytes (f32 [4])
//   weights     0 'linear.weight' -> storage 0        1 'linear.bias' -> storage 1
//   graph 0 'main' (entry point, with signature)
//     values  0 x [2,8]  1 w [4,8]  2 b [4]  3 y [2,4]  4 r DTensor local [2,2] global [2,4]
//             on mesh 0 (Replicate, Shard(1))  5 s SYM_INT  6 pg PROCESS_GROUP(0)  7 z [2,4]
//             8 out [2,4]
//     inputs  x, w, b (PARAMETER), s, pg
//     nodes   0 'linear'(x, w, b) -> y         1 'relu'(y, + one argument of most kinds) -> r
//             2 'all_reduce'(r, pg) -> z       3 'call_body'(graph 1, [z, y], ...) -> out
//     outputs out
//   graph 1 'body' (subgraph, no signature): values a, c, d; add(a, c) -> d
#pragma once

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "serializer/json_form.h"
#include "serializer/program_file.h"
#include "serializer/verify_options.h"

namespace nrt::testing {

ProgramWithWeights make_sample_program();

// serialize_program on a program and its storages (the writer stamps version and storage layout).
Result<std::vector<uint8_t>> serialize(const ProgramWithWeights& program);

// Serializes and opens from memory; the verifier's verdict on `program`.
Result<ProgramFile> serialize_and_open(const ProgramWithWeights& program, const VerifyOptions& options = {});

}  // namespace nrt::testing

#!/usr/bin/env bash
# Single-device torch exports sharded by the plans of testdata/sharding and run under mpirun
# against torch's own single-process outputs. testdata/torch/mlp (Linear(16,32)-ReLU-Linear(32,8)) through the real nrt-inspect shard, then run under
# mpirun with the mesh's ranks through nrt-run: colwise->rowwise on 2, 3 (uneven: 32 over 3) and
# 4 ranks, dp x tp on a 2x2 mesh, batch sharding with an empty shard (4 rows over 3). On every rank
# the global output must equal torch's single-process output (--expect, 1e-5). Also: the plan
# printed shows the Megatron plan's one all_reduce, --local-outputs writes each rank's shard, a
# world of the wrong size is refused naming both sizes, and malformed plans fail naming the entry.
# _StridedShard weights, inputs and outputs on 2 ranks, and FSDP over TP on 2x2.
# testdata/torch/lm_head (a head sharded over its vocabulary: argmax, argmin, max.dim, min.dim with
# ties across shards and a NaN on one shard) on 2, 3 and 2x2 ranks, and testdata/torch/argreduce5
# (a dim of 5 over 4 ranks: shards of 2, 2, 1, 0) run the (value, index) exchange; the
# communication report of --json counts what each rank sent. testdata/torch/attention_heads runs
# sharded by heads on 2 and 4 ranks (and through the fallback on 3). testdata/torch/llama__default
# (a 2-layer Llama exported from transformers) runs tensor-parallel with a vocabulary-sharded
# embedding (masked lookup), q/k/v and gate/up colwise, o and down rowwise, a colwise head: on 2
# ranks every op keeps its shards (5 all_reduces and the output's all_gather); on 4 its 2 kv heads
# cannot split, and those views are gathered. testdata/torch/embed_block covers the other rules.
# Skipped without mpirun.
set -u

source tests/executor/mpi_test_support.sh
require_mpirun sharded_torch_test

ROOT="$PWD"
INSPECT="$PWD/cli/nrt-inspect"
RUN="$PWD/cli/nrt-run"
MODEL="$PWD/testdata/torch/mlp/model.pt2"
PLANS="$PWD/testdata/sharding"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/sharded_torch.XXXXXX")
mkdir -p "$work/expect"
cp "$PWD/testdata/torch/mlp/output_0.npy" "$work/expect/linear_1.npy"
INPUT="x=$PWD/testdata/torch/mlp/input_0.npy"
cd "$work" || exit 1


# mlp_rowwise_sharded_bias: a rowwise weight beside a Shard(0) bias verifies, so it must run (the
# linear wants the bias Partial: gathered, then kept on group rank 0).
for case in "mlp_tp 2" "mlp_tp3 3" "mlp_tp4 4" "mlp_dp_tp 4" "mlp_batch 3" "mlp_strided2 2" "mlp_fsdp_tp 4" \
            "mlp_rowwise_sharded_bias 2"; do
  set -- $case
  "$INSPECT" shard "$MODEL" --plan "$PLANS/$1.json" -o "$1.nrt" 2> "$1.shard.err"
  check "$1: nrt-inspect shard" [ $? -eq 0 ]
  "$INSPECT" verify "$1.nrt" > /dev/null
  check "$1: the sharded program verifies" [ $? -eq 0 ]
  mpi 60 -np "$2" "$RUN" "$1.nrt" --input "$INPUT" --expect expect --output-dir "out_$1" > "$1.run.out" 2>&1
  check "$1 on $2 ranks equals torch's output" [ $? -eq 0 ]
  check "$1: rank 0 wrote the global output" [ -f "out_$1/linear_1.npy" ]
done

"$INSPECT" plan mlp_tp.nrt > plan.out
check "plan: colwise linear without traffic" contains plan.out "linear (aten::linear.default): linear, inputs [Replicate()], [Shard(0)], [Shard(0)] -> [Shard(1)]"
check "plan: rowwise linear gives a partial sum" contains plan.out "-> [Partial(sum)]"
check "plan: one all_reduce" [ "$(grep -c '(all_reduce)' plan.out)" -eq 1 ]
check "plan: no all_gather" [ "$(grep -c '(all_gather)' plan.out)" -eq 0 ]
"$INSPECT" info mlp_tp.nrt > info.out
check "info shows the shard and the global shape" contains info.out "dtensor<f32[16,16] global [32,16], mesh 0 [Shard(0)]>"

# _StridedShard: on 2 ranks the weight's interleaved chunks are copied out of the whole stored
# weight, the input is cut and the output assembled from strided shards; FSDP over TP on 2x2
# ([_StridedShard(0, sf=2), Shard(0)]) gives each rank one contiguous block: a view, and the
# linear all-gathers it over dp.
"$INSPECT" plan mlp_strided2.nrt > strided_plan.out
check "strided plan: the weight is copied" contains strided_plan.out "fc1.weight (weight): strided weight: copied, inputs [Replicate()] -> [_StridedShard(dim=0, sf=2)]"
"$INSPECT" plan mlp_fsdp_tp.nrt > fsdp_plan.out
check "FSDP x TP plan: the weight is a view" [ "$(grep -c 'strided weight' fsdp_plan.out)" -eq 0 ]
check "FSDP x TP plan: gathered over dp" contains fsdp_plan.out "redistribute p_fc1_weight on mesh dim 0: _StridedShard(dim=0, sf=2) -> Replicate() (all_gather)"
"$INSPECT" info mlp_strided2.nrt > strided_info.out
check "info shows the strided shard" contains strided_info.out "_StridedShard(dim=0, sf=2)"
mpi 60 -np 2 "$RUN" mlp_strided2.nrt --input "$INPUT" --local-outputs --output-dir 'strided_{rank}' > strided_local.out 2>&1
check "strided --local-outputs runs" [ $? -eq 0 ]

# --local-outputs: each rank writes its Shard(0) rows of the batch-sharded output (2, 2, 0 of 4).
mpi 60 -np 3 "$RUN" mlp_batch.nrt --input "$INPUT" --local-outputs --output-dir 'local_{rank}' > local.out 2>&1
check "--local-outputs runs" [ $? -eq 0 ]
rows() { od -An -c "$1" | tr -d ' \n' | grep -o "'shape':([0-9]*," | tr -dc '0-9'; }
check "--local-outputs: rank 0 holds 2 rows" [ "$(rows local_0/linear_1.npy)" = "2" ]
check "--local-outputs: rank 2 holds the empty shard" [ "$(rows local_2/linear_1.npy)" = "0" ]

mpi 60 -np 2 "$RUN" mlp_tp4.nrt --input "$INPUT" > wrong_world.out 2>&1
check "a world of the wrong size is refused" [ $? -ne 0 ]
check "the refusal names both sizes" contains wrong_world.out "has 4 ranks; the world has 2"

bad_plan() {
  local name="$1" text="$2" want="$3"
  printf '%s' "$text" > "$name.json"
  "$INSPECT" shard "$MODEL" --plan "$name.json" -o "$name.nrt" 2> "$name.err"
  check "plan $name is refused with exit 2, as every NRT-E104" [ $? -eq 2 ]
  check "plan $name: the code is NRT-E104" contains "$name.err" "NRT-E104"
  check "plan $name: the error names it" contains "$name.err" "$want"
}
bad_plan unknown_fqn '{"mesh": {"shape": [2]}, "parameters": {"fc3.weight": ["Shard(0)"]}}' "parameters 'fc3.weight'"
bad_plan unknown_input '{"mesh": {"shape": [2]}, "inputs": {"y": ["Shard(0)"]}}' "inputs 'y'"
bad_plan bad_dim '{"mesh": {"shape": [2]}, "inputs": {"x": ["Shard(2)"]}}' "Shard(2) on a tensor of 2 dims"
bad_plan malformed '{"mesh": {"shape": [2]}, "inputs": {"x": ["Shard(zero)"]}}' "placement 'Shard(zero)'"
bad_plan count '{"mesh": {"shape": [2, 2], "dim_names": ["dp", "tp"]}, "inputs": {"x": ["Shard(0)"]}}' "1 placements for a mesh of 2 dims"
bad_plan style '{"mesh": {"shape": [2]}, "modules": {"fc1": "diagonal"}}' "modules 'fc1'"

# -o must be a .nrt of its own: not JSON, not the plan, not the input (nothing is overwritten).
cp "$PLANS/mlp_tp.json" own_plan.json
cp "$MODEL" own_model.pt2
for case in "x.nrt.json|shard writes a binary .nrt" "own_plan.json|is the plan" "own_model.pt2|is the input program"; do
  out="${case%%|*}" want="${case#*|}"
  before=$(cksum own_plan.json own_model.pt2)
  "$INSPECT" shard own_model.pt2 --plan own_plan.json -o "$out" 2> out_refused.err
  check "-o $out is refused with exit 2" [ $? -eq 2 ]
  check "-o $out: the error says why" contains out_refused.err "$want"
  check "-o $out: nothing was overwritten" [ "$before" = "$(cksum own_plan.json own_model.pt2)" ]
done
check "-o x.nrt.json wrote nothing" [ ! -e x.nrt.json ]

# Expectations named after each program's outputs, from torch's output_<i>.npy.
expect() {
  local model="$1" i=0 name; shift
  mkdir -p "expect_$model"
  for name in "$@"; do cp "$ROOT/testdata/torch/$model/output_$i.npy" "expect_$model/$name.npy"; i=$((i + 1)); done
}
# Shards testdata/torch/MODEL by testdata/sharding/PLAN.json into PLAN.nrt and runs it on RANKS
# ranks for at most SECONDS against expect_MODEL; the remaining arguments go to nrt-run.
shard_and_run() {
  local model="$1" plan="$2" ranks="$3" seconds="$4"; shift 4
  "$INSPECT" shard "$ROOT/testdata/torch/$model/model.pt2" --plan "$PLANS/$plan.json" -o "$plan.nrt" 2> "$plan.shard.err"
  check "$plan: nrt-inspect shard" [ $? -eq 0 ]
  mpi "$seconds" -np "$ranks" "$RUN" "$plan.nrt" "$@" --expect "expect_$model" > "$plan.run.out" 2>&1
  check "$plan: $model on $ranks ranks equals torch's output" [ $? -eq 0 ]
}
expect lm_head argmax getitem getitem_1 argmin getitem_2 getitem_3
expect argreduce5 argmax argmin getitem getitem_1 argmax_1
LM_INPUTS=(--input "x=$ROOT/testdata/torch/lm_head/input_0.npy" --input "mask=$ROOT/testdata/torch/lm_head/input_1.npy")
# Ties across shards, a NaN on one shard, empty shards.
for case in "lm_head_vocab2 2" "lm_head_vocab3 3" "lm_head_dp_tp 4"; do
  set -- $case
  shard_and_run lm_head "$1" "$2" 60 "${LM_INPUTS[@]}"
done
shard_and_run argreduce5 argreduce5_4 4 60 --input "x=$ROOT/testdata/torch/argreduce5/input_0.npy" \
  --input "flags=$ROOT/testdata/torch/argreduce5/input_1.npy"
"$INSPECT" plan lm_head_vocab2.nrt > lm_plan.out
check "plan: argmax over the sharded vocabulary is an exchange" contains lm_plan.out "argmax (aten::argmax.default): arg reduction: (value, index) exchange"
check "plan: the logits are never gathered" [ "$(grep -c 'redistribute' lm_plan.out)" -eq 0 ]

# Attention sharded by heads: q, k, v colwise and o rowwise; the views split the sharded
# projection into (heads, head_dim) and merge it back, so 2 and 4 ranks need one all_reduce; 4
# heads over 3 ranks cannot split evenly and the views fall back to Replicate (still torch's answer).
expect attention_heads linear_3
for case in "attention_heads2 2" "attention_heads4 4" "attention_heads3 3"; do
  set -- $case
  shard_and_run attention_heads "$1" "$2" 60 --input "x=$ROOT/testdata/torch/attention_heads/input_0.npy"
done
check "attention by heads on 2 ranks: one all_reduce" contains attention_heads2.run.out "communication: 1 collective,"
"$INSPECT" plan attention_heads2.nrt > att_plan.out
check "plan: attention runs sharded by heads" contains att_plan.out "attention, inputs [Shard(1)], [Shard(1)], [Shard(1)] -> [Shard(1)]"
check "plan: the head split keeps the shard" contains att_plan.out "view (aten::view.default): view, inputs [Shard(2)] -> [Shard(2)]"

# info --check-ops: the ops a sharded run computes whole (the head views on 3 ranks).
"$INSPECT" info --check-ops attention_heads3.nrt > check3.out
check "check-ops lists the views that run replicated" contains check3.out "3 op(s) run replicated"
check "check-ops names them" contains check3.out "view_1 (aten::view.default)"
"$INSPECT" info --check-ops attention_heads2.nrt > check2.out
check "check-ops: nothing replicated by heads on 2 ranks" contains check2.out "every op with sharded inputs keeps its shards"

# The rules beyond linear and attention (testdata/torch/embed_block): a vocabulary-sharded
# embedding (50 rows over 2, and 17/17/16 over 3), layer_norm, split, cat, bmm, softmax, matmul,
# rms_norm, mean, select, unsqueeze; with dp x tp, all of them keep the batch shard.
expect embed_block linear mean unsqueeze
for case in "embed_vocab2 2" "embed_vocab3 3" "embed_dp_tp 4"; do
  set -- $case
  shard_and_run embed_block "$1" "$2" 60 --input "tokens=$ROOT/testdata/torch/embed_block/input_0.npy"
  "$INSPECT" info --check-ops "$1.nrt" > "$1.check.out"
  check "$1: nothing replicated" contains "$1.check.out" "every op with sharded inputs keeps its shards"
done
check "embed_vocab3: one all_reduce of the looked-up rows" contains embed_vocab3.run.out "communication: 1 collective,"
"$INSPECT" plan embed_dp_tp.nrt > embed_plan.out
for rule in "layer_norm, inputs [Shard(0), Replicate()]" "split, inputs [Shard(0), Replicate()]" \
  "cat, inputs [Shard(0), Replicate()], [Shard(0), Replicate()]" "bmm, inputs [Shard(0), Replicate()]" \
  "rms_norm, inputs [Shard(0), Replicate()]" "select, inputs [Shard(0), Replicate()]" \
  "mean (aten::mean.dim): mean, inputs [Shard(0), Replicate()]" \
  "embedding (vocabulary-sharded), inputs [Replicate(), Shard(0)], [Shard(0), Replicate()] -> [Shard(0), Partial(sum)]"; do
  check "embed_dp_tp plan: $rule" contains embed_plan.out "$rule"
done

# A real decoder: transformers' Llama, tensor-parallel (testdata/sharding/llama_tp*.json).
expect llama__default linear_14
for case in "llama_tp2 2" "llama_tp4 4"; do
  set -- $case
  shard_and_run llama__default "$1" "$2" 90 --input "args_0=$ROOT/testdata/torch/llama__default/input_0.npy"
done
check "llama_tp2: the minimum of collectives" contains llama_tp2.run.out "communication: 6 collectives, 14336 bytes sent by this rank (all_gather_into_tensor x1, all_reduce x5)"
"$INSPECT" info --check-ops llama_tp2.nrt > llama_check2.out
check "llama_tp2: nothing replicated" contains llama_check2.out "every op with sharded inputs keeps its shards"
"$INSPECT" plan llama_tp2.nrt > llama_plan2.out
check "llama_tp2: the embedding is a masked lookup" contains llama_plan2.out "embedding (vocabulary-sharded), inputs [Shard(0)], [Replicate()] -> [Partial(sum)]"
"$INSPECT" info --check-ops llama_tp4.nrt > llama_check4.out
check "llama_tp4: the kv-head views that cannot split are listed" contains llama_check4.out "4 op(s) run replicated"

# The communication report: the Megatron MLP sends one all_reduce of its [4, 8] f32 output
# (2 (n-1)/n x 128 bytes on 2 ranks); the LM head sends 4 exchanges of 3 records of 12 bytes.
mpi 60 -np 2 "$RUN" mlp_tp.nrt --input "$INPUT" --json > comm.json 2> comm.err
check "--json runs" [ $? -eq 0 ]
check "communication: bytes sent" contains comm.json '"bytes_sent":128,'
check "communication: one all_reduce" contains comm.json '"count":1,"group":"mesh.tp.0","op":"all_reduce"'
mpi 60 -np 2 "$RUN" lm_head_vocab2.nrt "${LM_INPUTS[@]}" --json > lm_comm.json 2> lm_comm.err
check "communication: the exchanges send records, not logits" contains lm_comm.json '"bytes_sent":144,"collectives":[{"bytes_sent":144,"count":4'
mpi 60 -np 2 "$RUN" mlp_tp.nrt --input "$INPUT" > comm.txt 2>&1
check "communication: one summary line" contains comm.txt "communication: 1 collective, 128 bytes sent by this rank (all_reduce x1)"

finish

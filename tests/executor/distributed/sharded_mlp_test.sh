#!/usr/bin/env bash
# testdata/torch/mlp (exported by torch from a single-device Linear(16,32)-ReLU-Linear(32,8))
# sharded by the plans of testdata/sharding through the real nrt-inspect shard, then run under
# mpirun with the mesh's ranks through nrt-run: colwise->rowwise on 2, 3 (uneven: 32 over 3) and
# 4 ranks, dp x tp on a 2x2 mesh, batch sharding with an empty shard (4 rows over 3). On every rank
# the global output must equal torch's single-process output (--expect, 1e-5). Also: the plan
# printed shows the Megatron plan's one all_reduce, --local-outputs writes each rank's shard, a
# world of the wrong size is refused naming both sizes, and malformed plans fail naming the entry.
# Skipped without mpirun.
set -u

source tests/executor/mpi_test_support.sh
require_mpirun sharded_mlp_test

INSPECT="$PWD/cli/nrt-inspect"
RUN="$PWD/cli/nrt-run"
MODEL="$PWD/testdata/torch/mlp/model.pt2"
PLANS="$PWD/testdata/sharding"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/sharded_mlp.XXXXXX")
mkdir -p "$work/expect"
cp "$PWD/testdata/torch/mlp/output_0.npy" "$work/expect/linear_1.npy"
INPUT="x=$PWD/testdata/torch/mlp/input_0.npy"
cd "$work" || exit 1

failures=0
check() { local what="$1"; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi; }
contains() { grep -qF -- "$2" "$1" || { echo "--- $1 lacks: $2"; cat "$1"; return 1; }; }

for case in "mlp_tp 2" "mlp_tp3 3" "mlp_tp4 4" "mlp_dp_tp 4" "mlp_batch 3"; do
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
  check "plan $name is refused" [ $? -eq 1 ]
  check "plan $name: the error names it" contains "$name.err" "$want"
}
bad_plan unknown_fqn '{"mesh": {"shape": [2]}, "parameters": {"fc3.weight": ["Shard(0)"]}}' "parameters 'fc3.weight'"
bad_plan unknown_input '{"mesh": {"shape": [2]}, "inputs": {"y": ["Shard(0)"]}}' "inputs 'y'"
bad_plan bad_dim '{"mesh": {"shape": [2]}, "inputs": {"x": ["Shard(2)"]}}' "Shard(2) on a tensor of 2 dims"
bad_plan malformed '{"mesh": {"shape": [2]}, "inputs": {"x": ["Shard(zero)"]}}' "placement 'Shard(zero)'"
bad_plan count '{"mesh": {"shape": [2, 2], "dim_names": ["dp", "tp"]}, "inputs": {"x": ["Shard(0)"]}}' "1 placements for a mesh of 2 dims"
bad_plan style '{"mesh": {"shape": [2]}, "modules": {"fc1": "diagonal"}}' "modules 'fc1'"

echo "$failures failures"
[ "$failures" -eq 0 ]

#!/usr/bin/env bash
# Sharded draws equal the one-process draw bit for bit (issue 26). testdata/torch/philox (torch's
# stateless ops: every dtype, uneven and empty shards) sharded by generated plans through the real
# nrt-inspect shard, run under mpirun on 1 to 4 ranks with Shard on each dim, on a 2x2 mesh and
# with _StridedShard: every output equals torch's own (--expect, --atol 0 --rtol 0).
# testdata/torch/seeded_draws (rand, randn, randint, normal, uniform, bernoulli, dropout: nrt's
# seeded draws) the same way against its one-process run with the same --seed. The plans show the
# draws kept sharded (each rank its own elements) and check-ops lists none of them as computed
# whole, but the batched-key draw. The training-IR forms (in place on aten.empty: drawn whole, then
# cut) give the same bits too. Skipped without mpirun.
set -u

source tests/executor/mpi_test_support.sh
require_mpirun sharded_draws_test

INSPECT="$PWD/cli/nrt-inspect"
RUN="$PWD/cli/nrt-run"
PHILOX="$PWD/testdata/torch/philox"
SEEDED="$PWD/testdata/torch/seeded_draws"
SEEDED_INPLACE="$PWD/testdata/torch/seeded_draws_inplace"
PHILOX_INPLACE="$PWD/testdata/torch/philox_inplace"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/sharded_draws.XXXXXX")
cd "$work" || exit 1

# plan MODEL MESH VARIANT [STRIDED] > PLAN: every output of rank >= 1 sharded on dim (i + VARIANT)
# mod its rank (its i-th output), the second mesh dim on the next dim; STRIDED: _StridedShard(sf=2).
plan() {
  "$INSPECT" info "$1" --json 2> /dev/null | python3 -c '
import json, sys
mesh, variant, strided = json.loads(sys.argv[1]), int(sys.argv[2]), len(sys.argv) > 3
outputs = {}
for i, o in enumerate(json.load(sys.stdin)["graphs"][0]["outputs"]):
    rank = len(o["shape"])
    if rank == 0:
        continue
    d = (i + variant) % rank
    first = f"_StridedShard(dim={d}, sf=2)" if strided else f"Shard({d})"
    outputs[o["name"]] = [first] + ([f"Shard({(d + 1) % rank})"] if len(mesh) > 1 else [])
print(json.dumps({"mesh": {"shape": mesh}, "outputs": outputs}))
' "$2" "$3" ${4:+strided}
}

# torch_outputs CORPUS-DIR DEST: torch's outputs named as nrt-run writes them.
torch_outputs() {
  mkdir -p "$2"
  "$INSPECT" info "$1/model.pt2" --json 2> /dev/null | python3 -c '
import json, shutil, sys
manifest = json.load(open(sys.argv[1] + "/manifest.json"))
for o, entry in zip(json.load(sys.stdin)["graphs"][0]["outputs"], manifest["outputs"]):
    shutil.copy(sys.argv[1] + "/" + entry["file"], sys.argv[2] + "/" + o["name"] + ".npy")
' "$1" "$2"
  check "torch's outputs of $(basename "$1") are named" [ "$(ls "$2" | wc -l)" -eq 26 ]
}
torch_outputs "$PHILOX" torch_expect
torch_outputs "$PHILOX_INPLACE" torch_inplace_expect
PHILOX_INPUTS=(--input "key=$PHILOX/input_0.npy" --input "wrapping_key=$PHILOX/input_1.npy" --input "x=$PHILOX/input_2.npy")

# run_case NAME MODEL EXPECT RANKS PLAN-ARGS... -- RUN-ARGS...
run_case() {
  local name="$1" model="$2" expect="$3" ranks="$4"
  shift 4
  local plan_args=()
  while [ "$1" != "--" ]; do plan_args+=("$1"); shift; done
  shift
  plan "$model" "${plan_args[@]}" > "$name.json"
  "$INSPECT" shard "$model" --plan "$name.json" -o "$name.nrt" 2> "$name.shard.err"
  check "$name: nrt-inspect shard" [ $? -eq 0 ]
  mpi 120 -np "$ranks" "$RUN" "$name.nrt" "$@" --expect "$expect" --atol 0 --rtol 0 > "$name.out" 2>&1
  check "$name on $ranks ranks equals the one-process draw bit for bit" [ $? -eq 0 ]
}

for ranks in 1 2 3 4; do
  for variant in 0 1 2; do
    run_case "philox_${ranks}_v$variant" "$PHILOX/model.pt2" torch_expect "$ranks" "[$ranks]" "$variant" -- \
      "${PHILOX_INPUTS[@]}"
  done
done
for variant in 0 1; do
  run_case "philox_2x2_v$variant" "$PHILOX/model.pt2" torch_expect 4 "[2, 2]" "$variant" -- "${PHILOX_INPUTS[@]}"
done
run_case philox_strided "$PHILOX/model.pt2" torch_expect 2 "[2]" 0 strided -- "${PHILOX_INPUTS[@]}"

# The training IR's in-place draws: the same bits, whole then cut.
run_case philox_inplace_3 "$PHILOX_INPLACE/model.pt2" torch_inplace_expect 3 "[3]" 1 -- \
  "${PHILOX_INPUTS[@]}"

"$INSPECT" plan philox_2_v0.nrt > philox_plan.out 2>&1
check "plan: a draw keeps its shard" \
  contains philox_plan.out "_philox_uniform_1 (aten::_philox_uniform.default): draw (each rank its own elements)"
check "plan: x + draw draws the shard x's consumer wants" \
  contains philox_plan.out "_philox_uniform (aten::_philox_uniform.default): draw (each rank its own elements)"
"$INSPECT" info philox_2_v0.nrt --check-ops > check_ops.out 2>&1
check "check-ops: only the batched-key draw runs whole" contains check_ops.out "1 op(s) run replicated"
check "check-ops names it" contains check_ops.out "_philox_uniform_6 (aten::_philox_uniform.default)"

"$RUN" "$SEEDED/model.pt2" --input "x=$SEEDED/input_0.npy" --seed 5 --output-dir seeded_one > seeded_one.out 2>&1
check "seeded_draws runs in one process" [ $? -eq 0 ]
for ranks in 2 3 4; do
  for variant in 0 1; do
    run_case "seeded_${ranks}_v$variant" "$SEEDED/model.pt2" seeded_one "$ranks" "[$ranks]" "$variant" -- \
      --input "x=$SEEDED/input_0.npy" --seed 5
  done
done
run_case seeded_2x2 "$SEEDED/model.pt2" seeded_one 4 "[2, 2]" 0 -- --input "x=$SEEDED/input_0.npy" --seed 5
"$RUN" "$SEEDED_INPLACE/model.pt2" --input "x=$SEEDED_INPLACE/input_0.npy" --seed 5 --output-dir seeded_inplace_one \
  > seeded_inplace_one.out 2>&1
check "seeded_draws_inplace runs in one process" [ $? -eq 0 ]
run_case seeded_inplace_2 "$SEEDED_INPLACE/model.pt2" seeded_inplace_one 2 "[2]" 0 -- \
  --input "x=$SEEDED_INPLACE/input_0.npy" --seed 5
"$INSPECT" plan seeded_2_v0.nrt > seeded_plan.out 2>&1
check "plan: rand is drawn sharded" contains seeded_plan.out "rand (aten::rand.default): draw (each rank its own elements)"
check "plan: dropout's draw keeps its shard" \
  contains seeded_plan.out "native_dropout (aten::native_dropout.default): draw (each rank its own elements), inputs [Shard(0)] -> [Shard(0)]"
"$INSPECT" info seeded_2_v0.nrt --check-ops > seeded_check_ops.out 2>&1
check "check-ops: no seeded draw runs whole" contains seeded_check_ops.out "every op with sharded inputs keeps its shards"
mpi 120 -np 2 "$RUN" seeded_2_v0.nrt --input "x=$SEEDED/input_0.npy" --seed 6 --expect seeded_one --atol 0 --rtol 0 \
  > seeded_other_seed.out 2>&1
check "another seed draws other numbers" [ $? -eq 1 ]

finish

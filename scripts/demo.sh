#!/usr/bin/env bash
# The main job on the bundled example (testdata/mlp.nrt.json, a two-layer perceptron with
# weights): set up, build, convert to .nrt, verify deeply, show info and the graph, hash it, run
# it, and run it again on two ranks under mpirun, each checking the first run's outputs. Then a
# program torch exported with functional collectives (testdata/torch/collectives: all_reduce and
# all_gather over a 2-rank group) is imported from its .pt2 and run on two ranks. Last, a
# single-device torch export (testdata/torch/mlp) is sharded by a plan and run on two ranks.
# Outputs go to out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build --noshow_progress //cli:all
mkdir -p out/demo
INSPECT=bazel-bin/cli/nrt-inspect
run() { echo; echo "\$ $*"; "$@"; }

run "$INSPECT" convert testdata/mlp.nrt.json -o out/demo/mlp.nrt
run "$INSPECT" verify --deep out/demo/mlp.nrt
run "$INSPECT" info out/demo/mlp.nrt
run "$INSPECT" print out/demo/mlp.nrt
run "$INSPECT" hash out/demo/mlp.nrt
run bazel-bin/cli/nrt-run out/demo/mlp.nrt --random-inputs 0 --output-dir out/demo/outputs
# Every rank runs the program on the same deterministic inputs and checks the reference outputs.
run mpirun --allow-run-as-root --oversubscribe -np 2 \
  bazel-bin/cli/nrt-run out/demo/mlp.nrt --random-inputs 0 --expect out/demo/outputs

# torch.export .pt2 in, .nrt out; its collectives run over MPI, one process per rank.
run "$INSPECT" convert testdata/torch/collectives/model.pt2 -o out/demo/collectives.nrt
run "$INSPECT" print out/demo/collectives.nrt
run mpirun --allow-run-as-root --oversubscribe -np 2 \
  bazel-bin/cli/nrt-run out/demo/collectives.nrt --input x=testdata/torch/collectives/input_0.npy \
  --output-dir 'out/demo/collectives_rank{rank}'

# A single-device torch export made a DTensor program (fc1 colwise, fc2 rowwise over 2 ranks),
# its plan shown (one all_reduce), and run sharded on two ranks against torch's own output.
run "$INSPECT" shard testdata/torch/mlp/model.pt2 --plan testdata/sharding/mlp_tp.json -o out/demo/mlp_tp.nrt
run "$INSPECT" plan out/demo/mlp_tp.nrt
mkdir -p out/demo/mlp_expect && cp testdata/torch/mlp/output_0.npy out/demo/mlp_expect/linear_1.npy
run mpirun --allow-run-as-root --oversubscribe -np 2 \
  bazel-bin/cli/nrt-run out/demo/mlp_tp.nrt --input x=testdata/torch/mlp/input_0.npy --expect out/demo/mlp_expect

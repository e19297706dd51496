#!/usr/bin/env bash
# nrt-run --threads N gives the same bits as one thread: real models whose ops split their work
# over the intra-op threads (element-wise maps over large tensors, convolutions through im2col,
# depthwise convolutions, max pooling, attention per head, activations) run with --threads 1 and
# --threads 3 on the same inputs, and every output file must be byte-identical. A bad count is a
# usage error.
set -u
source tests/check_support.sh
RUN="$PWD/cli/nrt-run"
CORPUS="$PWD/testdata/torch"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/threads.XXXXXX")
cd "$work" || exit 1

for model in cnn mnasnet0_5__default vit__default llama__default convnext_small_config__core_aten; do
  for threads in 1 3; do
    "$RUN" "$CORPUS/$model/model.pt2" --random-inputs 7 --threads "$threads" --output-dir "${model}_$threads" \
      > "${model}_$threads.out" 2>&1
    check "$model runs with --threads $threads" [ $? -eq 0 ]
  done
  check "$model: the same outputs with 3 threads as with 1, bit for bit" diff -r "${model}_1" "${model}_3"
done

"$RUN" "$CORPUS/cnn/model.pt2" --random-inputs 7 --threads 0 > zero.out 2>&1
check "--threads 0 is a usage error (exit 2)" [ $? -eq 2 ]
check "... naming the option" contains zero.out "--threads"
finish threads_test

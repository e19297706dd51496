#!/usr/bin/env bash
# The canonical digests (nrt-inspect hash: structure, weights, full) of three committed programs,
# pinned: a plain MLP, a DTensor program and the torch corpus's attention export (through the
# .pt2 importer). Ranks compare these digests with each other before they run, and users store
# them: a change to any of them is a format change. Do not update the numbers alone: change the
# digest's scheme prefix ("nrt1-", serializer/digest.h) and record it in docs/FORMAT.md's history
# as its version rule says for changes an older reader cannot ignore.
set -u
source tests/check_support.sh
BIN="cli/nrt-inspect"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

pin() {  # pin PROGRAM STRUCTURE WEIGHTS FULL
  local program="$1" kind json="$tmp/hash.json"
  shift
  "$BIN" hash --json "$program" > "$json" 2> "$tmp/hash.err"
  check "$program hashes (exit $?)" [ $? -eq 0 ]
  for kind in structure weights full; do
    check "$program: the $kind digest is the pinned $1" grep -qF "\"$kind\": \"$1\"" "$json"
    shift
  done
}

pin testdata/mlp.nrt \
  nrt1-xxh3:bbe61887717dbbd102902b6be0cff9dd \
  nrt1-xxh3:6b46eaed9e34ec4c1db630f3bfa2dafa \
  nrt1-xxh3:dd257ecbe9d22b24cbf704ca4a51ee9b
pin testdata/dtensor.nrt \
  nrt1-xxh3:04a25b74b4b0513e8638e3a8ac6239c7 \
  nrt1-xxh3:e5189a9599e3f86205ea23ef06e28b2d \
  nrt1-xxh3:a556d30e0d3d831eb04e9d76325cc58d
pin testdata/torch/attention_heads/model.pt2 \
  nrt1-xxh3:26dddccdb36a8d66be94b134e5ec2607 \
  nrt1-xxh3:444a2965c01e19db06bd9efa5ef1c7a0 \
  nrt1-xxh3:530dcc94fd78ad6322e5589bea49d26b
finish

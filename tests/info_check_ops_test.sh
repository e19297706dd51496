#!/usr/bin/env bash
# `nrt-inspect info --check-ops` reports targets without a CPU kernel without running anything:
# exit 0 when every target has one, 1 with the list otherwise, and the same list in --json.
set -u
BIN="cli/nrt-inspect"
failures=0
check() { local what="$1"; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi; }

"$BIN" info --check-ops testdata/mlp.nrt > /dev/null; check "mlp: every target supported, exit 0" [ $? -eq 0 ]
out=$("$BIN" info --check-ops testdata/dtensor.nrt); status=$?
check "dtensor: missing kernels exit 1" [ "$status" -eq 1 ]
check "dtensor: lists the collective" grep -q "_c10d_functional::all_reduce.default" <<< "$out"
check "--json lists missing kernels per entry point" python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
assert "_c10d_functional::wait_tensor.default" in d["missing_kernels"]["main"], d["missing_kernels"]
' < <("$BIN" info --check-ops --json testdata/dtensor.nrt)
echo "$failures failures"
[ "$failures" -eq 0 ]

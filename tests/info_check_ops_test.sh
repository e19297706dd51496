#!/usr/bin/env bash
# `nrt-inspect info --check-ops` reports targets without a CPU kernel without running anything:
# exit 0 when every target has one, 1 with the list otherwise, and the same list in --json; a
# custom op's kernel library given with --kernel-library counts as support.
set -u
BIN="cli/nrt-inspect"
LIB="tests/executor/libenum_probe_kernels.so"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
source tests/check_support.sh

"$BIN" info --check-ops testdata/mlp.nrt > /dev/null; check "mlp: every target supported, exit 0" [ $? -eq 0 ]

# Every program of the torch corpus (three IRs of real architectures) but the one with a custom op
# of the corpus's own has a kernel for every target.
unsupported=""
for program in testdata/torch/*/model.pt2; do
  name=$(basename "$(dirname "$program")")
  [ "$name" = custom_op_enums ] && continue
  "$BIN" info --check-ops "$program" > /dev/null 2>&1 || unsupported="$unsupported $name"
done
check "every torch corpus program has a kernel for every target (missing in:$unsupported)" [ -z "$unsupported" ]

# The torch corpus's custom op has no built-in kernel.
"$BIN" convert testdata/torch/custom_op_enums/model.pt2 -o "$TMP/custom.nrt" 2> /dev/null
check "custom_op_enums converts" [ -f "$TMP/custom.nrt" ]
out=$("$BIN" info --check-ops "$TMP/custom.nrt"); status=$?
check "custom op: missing kernels exit 1" [ "$status" -eq 1 ]
check "custom op: lists the target" grep -q "nrt_corpus::enum_probe.default" <<< "$out"
check "--json lists missing kernels per entry point" python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
assert d["missing_kernels"]["model"] == ["nrt_corpus::enum_probe.default"], d["missing_kernels"]
' < <("$BIN" info --check-ops --json "$TMP/custom.nrt")
"$BIN" info --check-ops --kernel-library "$LIB" "$TMP/custom.nrt" > /dev/null
check "custom op: supported once its kernel library is loaded, exit 0" [ $? -eq 0 ]
# A bare file name is the file in the working directory, not a search of the library path.
(cd "$(dirname "$LIB")" && "$OLDPWD/$BIN" info --check-ops --kernel-library "$(basename "$LIB")" "$TMP/custom.nrt") > /dev/null
check "a kernel library given by bare name in the working directory loads, exit 0" [ $? -eq 0 ]
"$BIN" info --check-ops --kernel-library "$TMP/custom.nrt" "$TMP/custom.nrt" > /dev/null 2>&1; status=$?
check "a file that is not a kernel library is an error (1 or 2), not a crash (exit $status)" status_in "$status" 1 2
finish

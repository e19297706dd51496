#!/usr/bin/env bash
# Hostile input through the real tools: special files where a file is read or written, flags
# that would disable a check, files that declare more than can be held, all under a time limit
# (a hang fails the check) and, for the memory cases, a 2 GiB address-space limit (ulimit -v):
# each ends with a clean error and its stable code, never a hang or an abort.
set -u
source tests/check_support.sh
INSPECT="cli/nrt-inspect"
RUN="cli/nrt-run"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
out="$tmp/out.txt"

# expect EXIT CODE_TEXT DESCRIPTION COMMAND...: the command ends within 20 s with EXIT and its
# output names CODE_TEXT.
expect() {
  local want="$1" text="$2" what="$3"; shift 3
  timeout 20 "$@" >"$out" 2>&1
  local got=$?
  if [ "$got" -eq "$want" ] && { [ -z "$text" ] || grep -q -- "$text" "$out"; }; then
    pass "$what"
  else
    fail "$what: exit $got (want $want)"
    echo "  output:"; sed 's/^/    /' "$out" | head -5
  fi
}

# --- special files ------------------------------------------------------------------------------
mkfifo "$tmp/fifo.nrt" "$tmp/fifo.npy" "$tmp/out_fifo.nrt"
mkdir -p "$tmp/dir.nrt" "$tmp/expect"
mkfifo "$tmp/expect/linear_1.npy"
for special in "$tmp/fifo.nrt:a FIFO" "/dev/zero:a character device" "$tmp/dir.nrt:a directory"; do
  path="${special%%:*}" kind="${special#*:}"
  for command in "info" "info --json" "print" "verify" "hash" "convert -o $tmp/x.nrt"; do
    # shellcheck disable=SC2086  # the subcommand's words
    expect 2 "NRT-E101 IoOpen: '$path' is $kind" "nrt-inspect $command on $kind" "$INSPECT" $command "$path"
  done
  expect 2 "NRT-E101" "nrt-inspect diff with $kind" "$INSPECT" diff testdata/mlp.nrt "$path"
  expect 2 "NRT-E101 IoOpen: '$path' is $kind" "nrt-run on $kind" "$RUN" "$path"
  expect 2 "is $kind" "nrt-run --input from $kind" "$RUN" testdata/mlp.nrt --input "x=$path"
done
expect 2 "'$tmp/expect/linear_1.npy' is a FIFO" "nrt-run --expect with a FIFO" \
  "$RUN" testdata/mlp.nrt --random-inputs 1 --expect "$tmp/expect"
expect 2 "kernel library '$tmp/fifo.nrt' is a FIFO" "nrt-run --kernel-library FIFO" \
  "$RUN" testdata/mlp.nrt --random-inputs 1 --kernel-library "$tmp/fifo.nrt"
expect 2 "NRT-E102 IoWrite: '$tmp/out_fifo.nrt' is a FIFO" "convert -o FIFO" \
  "$INSPECT" convert testdata/mlp.nrt -o "$tmp/out_fifo.nrt"
check "the FIFO is still a FIFO" [ -p "$tmp/out_fifo.nrt" ]
expect 2 "NRT-E102 IoWrite: '$tmp/dir.nrt' is a directory" "convert -o directory" \
  "$INSPECT" convert testdata/mlp.nrt -o "$tmp/dir.nrt" --to nrt

# An overwritten output keeps its mode.
cp testdata/mlp.nrt "$tmp/kept.nrt" && chmod 600 "$tmp/kept.nrt"
expect 0 "" "convert over an 0600 file" "$INSPECT" convert testdata/mlp.nrt.json -o "$tmp/kept.nrt"
mode=$(stat -c %a "$tmp/kept.nrt")
check "mode 600 kept (mode $mode)" [ "$mode" = 600 ]
check "no temporary file left" bash -c '! ls "$0" | grep -q "\.tmp\."' "$tmp"

# --- flags --------------------------------------------------------------------------------------
# Outputs off by far more than any tolerance: a tolerance of NaN used to let them pass.
"$RUN" testdata/mlp.nrt --random-inputs 7 --output-dir "$tmp/wrong" >/dev/null 2>&1
"$RUN" testdata/mlp.nrt --random-inputs 8 --output-dir "$tmp/other" >/dev/null 2>&1
for flag in "--atol nan" "--rtol nan" "--atol inf" "--atol -1" "--rtol -0.5" "--atol 1e400"; do
  # shellcheck disable=SC2086
  expect 2 "NRT-E104 InvalidArgument: ${flag%% *}" "nrt-run $flag is a usage error" \
    "$RUN" testdata/mlp.nrt --random-inputs 7 --expect "$tmp/other" $flag
done
expect 1 "do not match" "off outputs still fail with finite tolerances" \
  "$RUN" testdata/mlp.nrt --random-inputs 7 --expect "$tmp/other" --atol 1e-3
expect 2 "NRT-E104 InvalidArgument: --repeat" "nrt-run --repeat 0" "$RUN" testdata/mlp.nrt --random-inputs 1 --repeat 0
expect 2 "NRT-E104 InvalidArgument: --threads" "hash --threads 0" "$INSPECT" hash testdata/mlp.nrt --threads 0
expect 2 "NRT-E104 InvalidArgument: --threads" "hash --threads 1e9" "$INSPECT" hash testdata/mlp.nrt --threads 1000000000
expect 2 "NRT-E104 InvalidArgument: --max-memory" "nrt-run --max-memory 12Q" "$RUN" testdata/mlp.nrt --max-memory 12Q
expect 2 "NRT-E104 InvalidArgument: NRT_MAX_MEMORY" "NRT_MAX_MEMORY=lots" env NRT_MAX_MEMORY=lots "$RUN" testdata/mlp.nrt --random-inputs 1
expect 2 "NRT-E1008 MemoryBudgetExceeded" "--max-memory 1K" "$RUN" testdata/mlp.nrt --random-inputs 1 --max-memory 1K
expect 0 "" "--max-memory 64M runs" "$RUN" testdata/mlp.nrt --random-inputs 1 --max-memory 64M

# --- declared sizes -----------------------------------------------------------------------------
mutate() {  # mutate OUT PYTHON: testdata/mlp.nrt.json, changed by PYTHON (d: the document)
  python3 -c "
import json, sys
d = json.load(open('testdata/mlp.nrt.json'))
values = {v['name']: v for v in d['graphs'][0]['values']}
$2
json.dump(d, open(sys.argv[1], 'w'))" "$1"
}
mutate "$tmp/major99.nrt.json" "d['schema_version']['major'] = 99"
mutate "$tmp/align.nrt.json" "d['storages'][0]['alignment'] = 1 << 30"
mutate "$tmp/unaddressable.nrt.json" "values['relu']['tensor']['sizes'][0]['literal'] = 100000000; values['relu']['tensor']['sizes'][1]['literal'] = 10000000"
mutate "$tmp/huge.nrt.json" "values['relu']['tensor']['sizes'][1]['literal'] = 3388997664"
mutate "$tmp/large.nrt.json" "values['relu']['tensor']['sizes'][1]['literal'] = 100000000"
expect 1 "NRT-E208 UnsupportedSchemaVersion" ".nrt.json of schema major 99" "$INSPECT" verify "$tmp/major99.nrt.json"
expect 1 "NRT-E208" "convert refuses schema major 99" "$INSPECT" convert "$tmp/major99.nrt.json" -o "$tmp/m.nrt"
expect 1 "NRT-E502 StorageMisaligned" "alignment 2^30" "$INSPECT" verify "$tmp/align.nrt.json"
expect 1 "NRT-E504 InvalidShape" "f32[1e8, 1e7] cannot be addressed" "$INSPECT" verify "$tmp/unaddressable.nrt.json"
(
  # 2 GiB of address space for everything below; not under ASan (NRT_SANITIZED), whose shadow
  # memory needs terabytes of it: there the budget alone is checked.
  [ "${NRT_SANITIZED:-0}" = 1 ] || ulimit -v 2097152
  expect 0 "valid" "f32[8, 3388997664] verifies" "$INSPECT" verify "$tmp/huge.nrt.json"
  expect 2 "NRT-E1008 MemoryBudgetExceeded: graph 'main': the memory plan" "108 GB plan: over the budget" \
    "$RUN" "$tmp/huge.nrt.json" --random-inputs 1
  # 3.2 GB is within the default budget (the machine's memory) but not the address space.
  if [ "${NRT_SANITIZED:-0}" != 1 ]; then
    expect 2 "NRT-E1008 MemoryBudgetExceeded" "3.2 GB plan under ulimit -v 2 GiB" "$RUN" "$tmp/large.nrt.json" --random-inputs 1
  fi
  expect 2 "NRT-E1008" "3.2 GB plan over --max-memory 1G" "$RUN" "$tmp/large.nrt.json" --random-inputs 1 --max-memory 1G
)

finish

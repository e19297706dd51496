#!/usr/bin/env bash
# nrt-run --repeat N stopped by SIGINT or SIGTERM reports what it measured (issue 25): the run in
# progress finishes, the report names the signal and the runs completed, nothing is written, and
# the exit status is 128 + the signal's number; --json says so too. Progress only on a terminal.
set -u
source tests/check_support.sh
RUN="$PWD/cli/nrt-run"
MODEL="$PWD/testdata/torch/r3d_small_config__default/model.pt2"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/interrupt.XXXXXX")
cd "$work" || exit 1

for signal in INT TERM; do
  "$RUN" "$MODEL" --random-inputs 1 --repeat 1000000 --output-dir "out_$signal" > "$signal.out" 2> "$signal.err" &
  pid=$!
  sleep 2
  kill -"$signal" "$pid"
  started=$(date +%s)
  wait "$pid"
  status=$?
  elapsed=$(( $(date +%s) - started ))
  expected=$(( 128 + $(kill -l "$signal") ))
  check "SIG$signal: exit $expected (exit $status)" [ "$status" -eq "$expected" ]
  check "SIG$signal: it stops within the run in progress ($elapsed s)" [ "$elapsed" -lt 10 ]
  check "SIG$signal: the report names the signal and the runs completed" \
    grep -qE "^interrupted: SIG$signal after [0-9]+ of 1000000 runs; no output was written or compared$" "$signal.out"
  check "SIG$signal: the time line covers the completed runs" grep -qE "^time: median [0-9.]+ ms over [0-9]+ runs" "$signal.out"
  check "SIG$signal: no output was written" [ -z "$(ls "out_$signal" 2> /dev/null)" ]
done

"$RUN" "$MODEL" --random-inputs 1 --repeat 1000000 --json > json.out 2> json.err &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
check "--json: the report says interrupted_by SIGINT" python3 -c '
import json; r = json.load(open("json.out"))
assert r["interrupted_by"] == "SIGINT" and r["repeat"] == 1000000 and 0 < r["runs"] < 1000000, r
assert r["exit_code"] == 130, r'
# A signal during the warm-up: no timed run, and the warm-up runs reported are those done.
"$RUN" "$MODEL" --random-inputs 1 --warmup 1000000 --repeat 5 > warmup.out 2> warmup.err &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
check "SIGINT during the warm-up: 0 of 5 runs" \
  grep -qE "^interrupted: SIGINT after 0 of 5 runs; no output was written or compared$" warmup.out
check "SIGINT during the warm-up: the warm-up runs done, not those asked" python3 -c '
import re; m = re.search(r", after ([0-9]+) warm-up runs?$", open("warmup.out").read(), re.M)
assert m and 0 < int(m.group(1)) < 1000000, open("warmup.out").read()'
# On a terminal (script(1) gives one) the runs done are shown as they go, the line cleared at the end.
script -qc "'$RUN' '$MODEL' --random-inputs 1 --repeat 300" /dev/null > tty.out 2>&1
check "a terminal shows the runs done" grep -qa "nrt-run: 300 of 300 runs, last" tty.out
"$RUN" "$MODEL" --random-inputs 1 --repeat 300 > pipe.out 2> pipe.err
check "a pipe gets no progress line" bash -c "! grep -q \"of 300 runs\" pipe.err"
finish

#!/usr/bin/env bash
# Collective faults under mpirun, each run bounded in time (docs/COLLECTIVES.md):
#  - testdata/torch/cond_collective (torch.cond whose true branch all_reduces) on 2 ranks whose
#    inputs take different branches: rank 0's watchdog fires within NRT_COLLECTIVE_TIMEOUT_S with
#    torch's line, every rank ends, both dumps exist and fr-analyze names rank 1;
#  - a NaN on rank 1 before testdata/torch/collectives's all_reduce: with NRT_NAN_CHECK=1 the job
#    fails naming rank, group, SeqNum and node; without it the same run completes;
#  - a rank killed with SIGKILL mid-run: the other ends within the timeout;
#  - SIGTERM to the job (mpirun): every rank dumps, reason SIGTERM;
#  - malformed NRT_* variables are refused by name.
# Skipped (exit 0, a <skipped/> case) without mpirun or NumPy for $NRT_PYTHON (default /usr/bin/python3).
set -u

source tests/executor/mpi_test_support.sh
skip() { skip_test collective_faults_test "$1"; }
require_mpirun collective_faults_test
PYTHON="${NRT_PYTHON:-/usr/bin/python3}"
"$PYTHON" -c 'import numpy' > /dev/null 2>&1 || skip "$PYTHON with numpy is not installed (Debian: python3-numpy)"

INSPECT="$PWD/cli/nrt-inspect"
RUN="$PWD/cli/nrt-run"
COND="$PWD/testdata/torch/cond_collective/model.pt2"
COLLECTIVES="$PWD/testdata/torch/collectives/model.pt2"
ROOT="$PWD"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/faults.XXXXXX")
cd "$work" || exit 1

seconds_since() { echo $(( $(date +%s) - $1 )); }

"$PYTHON" - <<'PY'
import numpy as np
np.save("pos.npy", np.ones((2, 3), np.float32))   # sum > 0: the branch with the all_reduce
np.save("neg.npy", -np.ones((2, 3), np.float32))  # the other branch: no collective
np.save("cond_0.npy", np.ones((2, 3), np.float32))
np.save("cond_1.npy", -np.ones((2, 3), np.float32))
x = np.arange(6, dtype=np.float32).reshape(2, 3)
np.save("x_0.npy", x)
y = x.copy(); y[1, 2] = np.nan
np.save("x_1.npy", y)
PY
check "numpy writes the inputs" [ $? -eq 0 ]

# 1. Ranks take different branches of a cond holding a collective.
started=$(date +%s)
NRT_COLLECTIVE_TIMEOUT_S=3 NRT_FR_DUMP_PREFIX="$work/cond_fr_" NRT_FR_DUMP_ON_EXIT=1 \
  mpi 120 -np 2 "$RUN" "$COND" --input 'x=cond_{rank}.npy' --output-dir 'cond_out_{rank}' > cond.out 2> cond.err
status=$?
elapsed=$(seconds_since "$started")
check "the job ends with an error (exit $status)" [ "$status" -ne 0 ]
check "... not by the outer timeout (exit $status)" [ "$status" -ne 124 ]
check "it ends within the watchdog's timeout and the launch ($elapsed s)" [ "$elapsed" -lt 60 ]
check "rank 0's watchdog names the collective torch's way" contains cond.err \
  "rank 0: error: NRT-E1012 CollectiveTimeout: Watchdog caught collective operation timeout: Work(SeqNum=1, OpType=ALLREDUCE, NumelIn=6, NumelOut=6, Timeout(ms)=3000) ran for"
check "rank 0 dumped on the timeout" contains cond.err "flight recorder dump (timeout): $work/cond_fr_0.json"
check "rank 0 left a dump" [ -s cond_fr_0.json ]
check "rank 1 left a dump" [ -s cond_fr_1.json ]
"$INSPECT" fr-analyze cond_fr_0.json cond_fr_1.json > analyze.out 2> analyze.err
status=$?
check "fr-analyze finds a mismatch (exit $status)" [ "$status" -eq 1 ]
check "fr-analyze names rank 1 and the collective it never entered" contains analyze.out \
  "first mismatch: ranks [1] never entered all_reduce SeqNum=1 of process group '0' (node 'all_reduce'), which ranks [0] entered"
"$INSPECT" fr-analyze --json cond_fr_0.json cond_fr_1.json > analyze.json
check "fr-analyze --json says who" "$PYTHON" -c '
import json; a = json.load(open("analyze.json"))
assert a["agree"] is False and a["findings"][0]["kind"] == "not_entered", a
assert a["findings"][0]["ranks"] == [1] and a["findings"][0]["seq"] == 1, a'
"$INSPECT" fr-analyze cond_fr_1.json cond_fr_1.json > /dev/null 2> twice.err
check "two dumps of one rank are a usage error" [ $? -eq 2 ]
NRT_MAX_MEMORY=1K "$INSPECT" fr-analyze cond_fr_0.json cond_fr_1.json > /dev/null 2> budget.err
status=$?
check "fr-analyze past the memory budget: exit 2 (exit $status)" [ "$status" -eq 2 ]
check "... naming the dump and the budget" contains budget.err "NRT-E1008 MemoryBudgetExceeded: cond_fr_0.json: analysing the dumps"

# The same job with NRT_FR_DUMP_FORMAT=torch: torch's pickles at <prefix><rank>, which fr-analyze
# reads and finds the same mismatch in.
NRT_FR_DUMP_FORMAT=torch NRT_COLLECTIVE_TIMEOUT_S=3 NRT_FR_DUMP_PREFIX="$work/torch_fr_" NRT_FR_DUMP_ON_EXIT=1 \
  mpi 120 -np 2 "$RUN" "$COND" --input 'x=cond_{rank}.npy' > torch_cond.out 2> torch_cond.err
check "torch format: rank 0 dumped on the timeout to <prefix><rank>" contains torch_cond.err \
  "flight recorder dump (timeout): $work/torch_fr_0"
check "torch format: rank 0 left a dump" [ -s torch_fr_0 ]
check "torch format: rank 1 left a dump" [ -s torch_fr_1 ]
check "torch format: no .json dump" [ ! -e torch_fr_0.json ]
check "torch format: a pickle with torch's keys and entry fields" "$PYTHON" -c '
import pickle
d = pickle.load(open("torch_fr_0", "rb"))
assert {"version", "pg_config", "pg_status", "entries"} <= set(d), d.keys()
e = d["entries"][0]
for key in ("record_id", "pg_id", "process_group", "collective_seq_id", "p2p_seq_id", "op_id", "profiling_name",
            "input_sizes", "input_dtypes", "output_sizes", "output_dtypes", "time_created_ns", "duration_ms",
            "timeout_ms", "state", "frames"):
    assert key in e, key
assert e["profiling_name"] == "mpi:all_reduce" and e["input_dtypes"] == ["Float"] and e["collective_seq_id"] == 1, e
assert d["pg_config"]["0"]["ranks"] == "[0, 1]", d["pg_config"]'
"$INSPECT" fr-analyze torch_fr_0 torch_fr_1 > torch_analyze.out 2> torch_analyze.err
status=$?
check "fr-analyze reads torch-format dumps: a mismatch (exit $status)" [ "$status" -eq 1 ]
check "... naming rank 1 as from nrt's own dumps" contains torch_analyze.out \
  "first mismatch: ranks [1] never entered all_reduce SeqNum=1 of process group '0' (node 'all_reduce'), which ranks [0] entered"
# Committed dumps of that job with torch's own analyzer's report on them (scripts/torch_corpus.py
# --fr-dumps): torch named rank 1 missing from collective 1; nrt's analysis names the same.
FR_TORCH="$ROOT/testdata/fr_torch"
check "torch's report names rank 1 missing from collective 1" \
  bash -c "grep -qF 'missing ranks: {1}' '$FR_TORCH/torchfrtrace.txt' && grep -qF 'sequence number: 1' '$FR_TORCH/torchfrtrace.txt'"
"$INSPECT" fr-analyze --json "$FR_TORCH/cond_fr_0" "$FR_TORCH/cond_fr_1" > committed.json
check "fr-analyze of the committed dumps names what torch named" "$PYTHON" -c '
import json; a = json.load(open("committed.json"))
f = a["findings"][0]
assert a["agree"] is False and f["kind"] == "not_entered" and f["ranks"] == [1] and f["seq"] == 1, a'
NRT_FR_DUMP_FORMAT=json mpi 60 -np 2 "$RUN" "$COND" --input 'x=pos.npy' > bad_format.out 2> bad_format.err
check "an unknown NRT_FR_DUMP_FORMAT stops the job (exit $?)" contains bad_format.err \
  "NRT_FR_DUMP_FORMAT='json': nrt (JSON, the default) or torch (torch's pickle)"

# The same job keeping no entries (NRT_FR_BUFFER_SIZE=0): its dumps are no verdict of "agree".
NRT_FR_BUFFER_SIZE=0 NRT_COLLECTIVE_TIMEOUT_S=3 NRT_FR_DUMP_PREFIX="$work/empty_fr_" NRT_FR_DUMP_ON_EXIT=1 \
  mpi 120 -np 2 "$RUN" "$COND" --input 'x=cond_{rank}.npy' > empty.out 2> empty.err
check "the job without a flight recorder still ends (exit $?)" [ -s empty_fr_0.json ]
"$INSPECT" fr-analyze empty_fr_0.json empty_fr_1.json > empty_analyze.out 2>&1
status=$?
check "fr-analyze of dumps holding nothing: exit 1, not 'agree' (exit $status)" [ "$status" -eq 1 ]
check "... saying what is missing" contains empty_analyze.out "the dumps hold no collective: nothing to compare"

echo '{"format": "nrt-flight-recorder", "version": 7}' > future.json
"$INSPECT" fr-analyze future.json > /dev/null 2> future.err
check "a dump of another version is refused (exit 2)" [ $? -eq 2 ]
check "naming the version" contains future.err "version 7 is not supported"

# Both ranks take the branch with the collective: the dumps agree.
NRT_FR_DUMP_PREFIX="$work/same_fr_" NRT_FR_DUMP_ON_EXIT=1 \
  mpi 60 -np 2 "$RUN" "$COND" --input 'x=pos.npy' --output-dir 'same_out_{rank}' > same.out 2> same.err
check "both ranks through the all_reduce: 1 + 1 on every rank" "$PYTHON" -c '
import numpy as np
for r in (0, 1):
    assert (np.load(f"same_out_{r}/getitem.npy") == 2).all(), r'
"$INSPECT" fr-analyze same_fr_0.json same_fr_1.json > same_analyze.out
check "fr-analyze: the dumps agree (exit $?)" contains same_analyze.out "the dumps agree"
check "the completed all_reduce is recorded with its node and duration" "$PYTHON" -c '
import json; d = json.load(open("same_fr_0.json"))
e = d["entries"][0]
assert d["format"] == "nrt-flight-recorder" and d["version"] == 1 and d["reason"] == "exit", d
assert e["op"] == "all_reduce" and e["node"] == "all_reduce" and e["state"] == "completed", e
assert e["collective_seq_id"] == 1 and e["duration_ms"] >= 0 and e["input_sizes"] == [[2, 3]], e'

# 2. A NaN on rank 1 before the all_reduce.
started=$(date +%s)
NRT_NAN_CHECK=1 mpi 60 -np 2 "$RUN" "$COLLECTIVES" --input 'x=x_{rank}.npy' --output-dir 'nan_out_{rank}' \
  > nan.out 2> nan.err
status=$?
elapsed=$(seconds_since "$started")
check "the NaN check fails the job (exit $status)" [ "$status" -ne 0 ]
check "... not by the outer timeout (exit $status)" [ "$status" -ne 124 ]
check "no rank is left hanging: the job ends well inside its 60 s limit ($elapsed s)" [ "$elapsed" -lt 45 ]
check "rank 1 reports rank, group, SeqNum, op, node and index" contains nan.err \
  "rank 1: error: NRT-E1013 NanInCollective: graph 'model' node 0 'all_reduce'"
check "... with the details" contains nan.err \
  "NaN check: rank 1, process group '0', SeqNum=1, all_reduce of node 'all_reduce': the send buffer f32[2,3] holds a NaN at flat index 5"
check "rank 1 dumped its recorder on the failed collective" "$PYTHON" -c '
import json; d = json.load(open("nrt_fr_trace_1.json"))
assert d["reason"] == "collective failed" and d["entries"][-1]["state"] == "failed", d'
mpi 60 -np 2 "$RUN" "$COLLECTIVES" --input 'x=x_{rank}.npy' --output-dir 'nan_off_{rank}' > nan_off.out 2> nan_off.err
status=$?
check "without NRT_NAN_CHECK the same run completes (exit $status)" [ "$status" -eq 0 ]

# 3. A rank killed with SIGKILL mid-run.
started=$(date +%s)
NRT_COLLECTIVE_TIMEOUT_S=10 mpi 120 -np 2 bash -c \
  'echo $$ > "pid_$OMPI_COMM_WORLD_RANK"; exec "$0" "$@"' "$RUN" "$COLLECTIVES" --random-inputs 1 --repeat 1000000 \
  > kill.out 2> kill.err &
job=$!
for _ in $(seq 1 100); do [ -s pid_1 ] && break; sleep 0.1; done
sleep 2
kill -KILL "$(cat pid_1)"
wait "$job"
status=$?
elapsed=$(seconds_since "$started")
check "the job ends with an error after rank 1 is killed (exit $status)" [ "$status" -ne 0 ]
check "... not by the outer timeout (exit $status)" [ "$status" -ne 124 ]
check "within the timeout ($elapsed s)" [ "$elapsed" -lt 60 ]

# 4. SIGTERM to the job (to mpirun, which forwards it to the ranks): every rank dumps.
NRT_FR_DUMP_PREFIX="$work/term_fr_" mpi 120 -np 2 "$RUN" "$COLLECTIVES" --random-inputs 1 --repeat 1000000 \
  --output-dir 'term_out_{rank}' > term.out 2> term.err &
job=$!
# Signal only once both ranks are past loading and in their repeat loop (each has used 2 s of CPU):
# on a loaded machine a fixed sleep could signal them before their dump handler exists.
for _ in $(seq 90); do
  busy=0
  for pid in $(pgrep -f 'nrt-run .*term_out_'); do
    seconds=$(ps -o times= -p "$pid" 2> /dev/null | tr -d ' ')
    [ -n "$seconds" ] && [ "$seconds" -ge 2 ] && busy=$((busy + 1))
  done
  [ "$busy" -ge 2 ] && break
  sleep 1
done
pkill -TERM -f '^mpirun .*term_out_'
wait "$job"
check "rank 0 dumped on SIGTERM" [ -s term_fr_0.json ]
check "rank 1 dumped on SIGTERM" [ -s term_fr_1.json ]
check "the dumps say why" "$PYTHON" -c '
import json
for r in (0, 1):
    d = json.load(open(f"term_fr_{r}.json"))
    assert d["reason"] == "SIGTERM" and d["rank"] == r and len(d["entries"]) > 0, d["reason"]'

# 5. Malformed variables.
NRT_FR_BUFFER_SIZE=lots mpi 60 -np 2 "$RUN" "$COLLECTIVES" --random-inputs 1 > env.out 2> env.err
status=$?
check "a malformed NRT_FR_BUFFER_SIZE stops the job (exit $status)" [ "$status" -eq 2 ]
check "naming the variable" contains env.err "NRT_FR_BUFFER_SIZE='lots' is not an integer"

finish

#!/usr/bin/env bash
# testdata/torch/collectives (exported by torch: all_reduce 'sum' over group '0' = ranks [0, 1],
# wait_tensor, all_gather_into_tensor of 2, then * 2) on two ranks under mpirun, through the real
# nrt-inspect (import) and nrt-run. Rank r reads in_r.npy; NumPy computes the expectation
# cat(x0 + x1, x0 + x1) * 2. Also: a wrong expectation exits 1, a single process (no launcher)
# fails to load naming group '0', one rank is too few, --output-dir without {rank} is a usage error, and
# only rank 0 prints the text report, and ranks holding different programs (one constant apart, or
# another program) stop before the first collective naming the rank that differs. Output directories
# are compared as resolved (one shared directory is refused, out$OMPI_COMM_WORLD_RANK works), and
# {rank} in FILE runs one program per rank, compared by collective schedule. Skipped (exit 0, a <skipped/> test case) without mpirun or
# NumPy for the Debian interpreter scripts/setup.sh provides ($NRT_PYTHON, default /usr/bin/python3:
# the python3 first on PATH may be another one, without NumPy).
set -u

source tests/executor/mpi_test_support.sh
skip() { skip_test torch_collectives_test "$1"; }
require_mpirun torch_collectives_test
PYTHON="${NRT_PYTHON:-/usr/bin/python3}"
"$PYTHON" -c 'import numpy' > /dev/null 2>&1 || skip "$PYTHON with numpy is not installed (Debian: python3-numpy)"

INSPECT="$PWD/cli/nrt-inspect"
RUN="$PWD/cli/nrt-run"
MODEL="$PWD/testdata/torch/collectives/model.pt2"
MLP="$PWD/testdata/mlp.nrt"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/collectives.XXXXXX")
cd "$work" || exit 1


"$INSPECT" convert "$MODEL" -o model.nrt 2> convert.err
check "nrt-inspect converts the .pt2" [ $? -eq 0 ]

"$PYTHON" - <<'EOF'
import os
import numpy as np
x0 = (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1.25).astype(np.float32)
x1 = (np.arange(6, dtype=np.float32).reshape(2, 3) * -0.75 + 3.0).astype(np.float32)
np.save("in_0.npy", x0)
np.save("in_1.npy", x1)
s = x0 + x1
expected = (np.concatenate([s, s]) * 2).astype(np.float32)
for d in ("exp_0", "exp_1", "wrong"):
    os.makedirs(d, exist_ok=True)
np.save("exp_0/mul.npy", expected)
np.save("exp_1/mul.npy", expected)
wrong = expected.copy()
wrong[3, 1] += 1
np.save("wrong/mul.npy", wrong)
EOF
check "numpy writes the inputs and expectations" [ $? -eq 0 ]

# Two ranks, each with its own input, expectation and output directory.
mpi 60 -np 2 "$RUN" model.nrt --input 'x=in_{rank}.npy' --expect 'exp_{rank}' --output-dir 'out_{rank}' --json \
  > run.json 2> run.err
status=$?
check "two ranks match the expectation (exit 0)" [ "$status" -eq 0 ]
[ "$status" -eq 0 ] || cat run.err
check "one JSON line per rank, rank order, every output matching" "$PYTHON" - <<'EOF'
import json
lines = [json.loads(line) for line in open("run.json") if line.strip()]
assert [j["rank"] for j in lines] == [0, 1], lines
for j in lines:
    assert j["ok"] and j["exit_code"] == 0 and j["world_size"] == 2, j
    (out,) = j["outputs"]
    assert out["name"] == "mul" and out["type"] == "f32[4,3]", out
    assert out["comparison"]["ok"] and out["comparison"]["mismatched"] == 0, out
    assert out["comparison"]["expected"] == "exp_%d/mul.npy" % j["rank"], out
    assert out["path"] == "out_%d/mul.npy" % j["rank"], out
EOF
check "each rank wrote exactly the expected output" "$PYTHON" -c '
import numpy as np
e = np.load("exp_0/mul.npy")
for r in (0, 1):
    np.testing.assert_array_equal(np.load("out_%d/mul.npy" % r), e)
'

# A wrong expectation: exit 1 from both ranks, reported in JSON.
mpi 60 -np 2 "$RUN" model.nrt --input 'x=in_{rank}.npy' --expect wrong --json > wrong.json 2> wrong.err
check "a wrong expectation exits 1" [ $? -eq 1 ]
check "the mismatch is one element on each rank" "$PYTHON" - <<'EOF'
import json
lines = [json.loads(line) for line in open("wrong.json") if line.strip()]
assert len(lines) == 2, lines
for j in lines:
    c = j["outputs"][0]["comparison"]
    assert not j["ok"] and j["exit_code"] == 1 and not c["ok"] and c["mismatched"] == 1, j
    assert c["worst"]["index"] == [3, 1], c
EOF
check "each rank logs its mismatch with its rank" contains wrong.err "nrt-run: rank 1: error: outputs do not match wrong"

# Without a launcher group '0' (ranks [0, 1]) is unbound: the load fails naming it.
"$RUN" model.nrt --input x=in_0.npy > single.out 2> single.err
check "a single process exits 2" [ $? -eq 2 ]
check "the error has the collective code" contains single.err "NRT-E1007 CollectiveFailed"
check "the error names group '0' and its ranks" contains single.err "process group '0' (ranks [0, 1]) is not bound in this process"
check "the error says it needs mpirun" contains single.err "run the program under mpirun"
check "the error names the collective" contains single.err "_c10d_functional::all_reduce.default"

# One rank is too few for group '0'.
mpi 60 -np 1 "$RUN" model.nrt --input 'x=in_{rank}.npy' > one.out 2> one.err
check "one rank under mpirun exits 2" [ $? -eq 2 ]
check "the error names the group, its ranks and the world size" \
  contains one.err "process group '0' has ranks [0, 1] but the world has 1 rank"

# One rank's bad input: every rank stops before the first collective (no hang), exit 2.
cp in_0.npy only0_0.npy
mpi 60 -np 2 "$RUN" model.nrt --input 'x=only0_{rank}.npy' > lone.out 2> lone.err
status=$?
check "a bad input on rank 1 alone ends the job with exit 2, not a timeout (exit $status)" [ "$status" -eq 2 ]
check "the error names rank 1 and its file" contains lone.err "rank 1"
check "the error names the missing file" contains lone.err "only0_1.npy"

# Several ranks writing into one directory would overwrite each other's outputs.
mpi 60 -np 2 "$RUN" model.nrt --input 'x=in_{rank}.npy' --output-dir shared > shared.out 2> shared.err
check "one --output-dir for two ranks exits 2" [ $? -eq 2 ]
check "the error names the ranks and the directory" contains shared.err "ranks [0, 1] would write their outputs into one directory, $PWD/shared"
check "nothing was written" [ ! -e shared ]
# Directories that differ once resolved per rank are as good as {rank} (a shell per rank expands them).
mpi 60 -np 2 bash -c '"$0" model.nrt --input "x=in_${OMPI_COMM_WORLD_RANK}.npy" --output-dir "bash_out$OMPI_COMM_WORLD_RANK"' "$RUN" \
  > bash.out 2> bash.err
check "--output-dir out\$OMPI_COMM_WORLD_RANK runs (exit 0)" [ $? -eq 0 ]
check "rank 0 wrote its own directory" [ -f bash_out0/mul.npy ]
check "rank 1 wrote its own directory" [ -f bash_out1/mul.npy ]

# Text mode: rank 0 alone prints the report.
mpi 60 -np 2 "$RUN" model.nrt --input 'x=in_{rank}.npy' --expect 'exp_{rank}' > text.out 2> text.err
check "text mode exits 0" [ $? -eq 0 ]
check "one report, rank 0's" [ "$(grep -c '^program: ' text.out)" -eq 1 ]
check "the report says how many ranks ran" contains text.out "ranks: 2 (this report is rank 0's)"
check "the report shows the match" contains text.out "matches exp_0/mul.npy"

# Ranks that hold different programs stop before the first collective, each saying who differs:
# the same program with the constant 2 of its mul made 3 (one constant), and another program.
"$INSPECT" convert model.nrt -o model.nrt.json
"$PYTHON" - <<'EOF'
import json
d = json.load(open("model.nrt.json"))
changed = 0
for node in d["graphs"][0]["nodes"]:
    for a in node.get("inputs", []):
        if a.get("name") == "other" and a.get("arg_type") == "IntArg" and a["arg"].get("value") == 2:
            a["arg"]["value"] = 3
            changed += 1
assert changed == 1, changed
json.dump(d, open("times3.nrt.json", "w"))
EOF
"$INSPECT" convert times3.nrt.json -o times3.nrt
for other in times3.nrt "$MLP"; do
  mpi 60 -np 1 "$RUN" model.nrt --input x=in_0.npy : -np 1 "$RUN" "$other" --input x=in_1.npy \
    > differ.out 2> differ.err
  status=$?
  check "ranks with $(basename "$other") beside model.nrt stop with exit 2, not a timeout (exit $status)" [ "$status" -eq 2 ]
  check "rank 0 names the rank that differs" contains differ.err "rank 0: error: NRT-E1009 RankMismatch: not running: ranks [1] hold a different program than ranks [0]: structure nrt1-xxh3:"
  check "rank 1 says the same" contains differ.err "rank 1: error: NRT-E1009"
  check "no rank ran" [ "$(grep -c '^program: ' differ.out)" -eq 0 ]
done

# One program per rank ({rank} in FILE), as torch exports tensor-parallel models: programs that
# differ in a constant but issue the same collectives run together; programs whose collectives
# differ stop before the first one, naming the ranks.
cp model.nrt prog_0.nrt
cp times3.nrt prog_1.nrt
mpi 60 -np 2 "$RUN" 'prog_{rank}.nrt' --input 'x=in_{rank}.npy' --output-dir 'prog_out_{rank}' > prog.out 2> prog.err
status=$?
check "per-rank programs with one collective schedule run (exit $status)" [ "$status" -eq 0 ]
[ "$status" -eq 0 ] || cat prog.err
check "rank 1 ran its own program (x3, not x2)" "$PYTHON" -c '
import numpy as np
a, b = np.load("prog_out_0/mul.npy"), np.load("prog_out_1/mul.npy")
assert np.allclose(b, a * 1.5), (a, b)'
cp "$MLP" prog_1.nrt
mpi 60 -np 2 "$RUN" 'prog_{rank}.nrt' --input 'x=in_{rank}.npy' > sched.out 2> sched.err
status=$?
check "per-rank programs with different collectives stop with exit 2 (exit $status)" [ "$status" -eq 2 ]
check "the ranks name the schedules that differ" \
  contains sched.err "NRT-E1009 RankMismatch: not running: ranks [1] hold a different collective schedule than ranks [0]: 0 collectives"

finish

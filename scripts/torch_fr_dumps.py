"""Flight-recorder dumps in torch's format, checked by torch's own analyzer (by hand, where torch
and mpirun are installed; `scripts/torch_corpus.py --fr-dumps`).

Runs testdata/torch/cond_collective on 2 ranks that take different branches of a cond holding an
all_reduce (rank 1 never enters it), with NRT_FR_DUMP_FORMAT=torch, then torch's analyzer
(`torchfrtrace`) on the dumps. Writes testdata/fr_torch/: cond_fr_0, cond_fr_1 (the dumps) and
torchfrtrace.txt (torch's report), and checks that torch names rank 1 missing from collective 1.
CI then checks nrt's side without torch (tests/executor/collective_faults_test.sh).
"""
import os
import shutil
import subprocess
import sys
import tempfile


def make(repo, nrt_run, out_dir):
    import numpy as np

    torchfrtrace = shutil.which("torchfrtrace") or os.path.join(os.path.dirname(sys.executable), "torchfrtrace")
    work = tempfile.mkdtemp()
    np.save(os.path.join(work, "cond_0.npy"), np.ones((2, 3), np.float32))  # the branch with the all_reduce
    np.save(os.path.join(work, "cond_1.npy"), -np.ones((2, 3), np.float32))  # the branch without
    env = dict(os.environ, NRT_FR_DUMP_FORMAT="torch", NRT_COLLECTIVE_TIMEOUT_S="3",
               NRT_FR_DUMP_PREFIX=os.path.join(work, "cond_fr_"), NRT_FR_DUMP_ON_EXIT="1")
    model = os.path.join(repo, "testdata", "torch", "cond_collective", "model.pt2")
    subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", nrt_run, model,
                    "--input", "x=" + os.path.join(work, "cond_{rank}.npy")], env=env, cwd=work, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.makedirs(out_dir, exist_ok=True)
    dumps = os.path.join(work, "dumps")
    os.makedirs(dumps)
    for rank in (0, 1):
        shutil.copy(os.path.join(work, f"cond_fr_{rank}"), os.path.join(dumps, f"cond_fr_{rank}"))
        shutil.copy(os.path.join(work, f"cond_fr_{rank}"), os.path.join(out_dir, f"cond_fr_{rank}"))
    report = subprocess.run([torchfrtrace, dumps, "--prefix", "cond_fr_"], capture_output=True, text=True, timeout=120)
    text = report.stdout + report.stderr
    with open(os.path.join(out_dir, "torchfrtrace.txt"), "w") as f:
        f.write(text)
    ok = "missing ranks: {1}" in text and "sequence number: 1" in text
    print(f"torchfrtrace {'names rank 1 missing from collective 1' if ok else 'did not name rank 1'}; "
          f"dumps and report in {out_dir}")
    return ok

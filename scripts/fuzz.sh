#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz/ (Bazel, clang with ASan+UBSan: the same tree as the
# sanitizer tests, through scripts/bazel_clang.sh), seeds their corpora, runs each for SECONDS
# (default 30) and prints one line per target:
#
#   fuzz: <target> <N> execs, <K> crashes
#
# Exits non-zero when a target crashed or did not build. What it writes lives under out/fuzz/
# (ignored by git): corpora (kept between runs, so they grow), logs, and crash inputs in
# out/fuzz/artifacts/ (reproduce: `scripts/bazel_clang.sh run //tests/fuzz:<target> -- <file>`).
#
# Seeds: open_verify_fuzzer testdata/*.nrt, json_form_fuzzer testdata/*.nrt.json (both also the
# verifier tests' sample program), execution_plan_fuzzer testdata/*.nrt.json and the torch corpus
# converted to .nrt.json (when the gcc build's nrt-inspect exists), pt2_archive_fuzzer
# testdata/torch/*/model.pt2 and the per-rank DTensor archives, torch_pickle_fuzzer the torch.save
# records (and their pickles) of those and testdata/torch/pickled_tensors, torch_json_fuzzer ../shared/conformance/torch_export/*.json; every
# target also tests/fuzz/seeds/<target>/ (inputs a campaign found interesting).
#
# Usage: scripts/fuzz.sh [SECONDS]
# A campaign (by hand): NRT_FUZZ_RUNS=1000000 scripts/fuzz.sh 7200 runs each target until one
# million executions or two hours, whichever comes first; NRT_FUZZ_TARGETS="a_fuzzer b_fuzzer"
# runs only those. Inputs the campaign found interesting stay in out/fuzz/corpus/<target>/.
set -uo pipefail
cd "$(dirname "$0")/.."

duration=${1:-30}
out=out/fuzz
mkdir -p "$out/artifacts" "$out/logs" "$out/corpus"

targets=()
for f in tests/fuzz/*_fuzzer.cc; do
  t=$(basename "$f" .cc)
  # NRT_FUZZ_TARGETS (space-separated names) picks a subset, e.g. for a campaign.
  if [ -n "${NRT_FUZZ_TARGETS:-}" ] && [[ " $NRT_FUZZ_TARGETS " != *" $t "* ]]; then continue; fi
  targets+=("$t")
done

# --- Building -------------------------------------------------------------------------------------
labels=()
for t in "${targets[@]}"; do labels+=("//tests/fuzz:$t"); done
built_together=1
if ! bash scripts/bazel_clang.sh build --noshow_progress "${labels[@]}" //tests/fuzz:make_fuzz_seeds \
     >"$out/logs/build.log" 2>&1; then
  tail -n 60 "$out/logs/build.log" >&2
  built_together=0
  # Each target is built alone to tell which ones are broken; the others still run.
  echo "fuzz.sh: the build failed (above, whole in $out/logs/build.log); trying each target alone" >&2
fi
bin=$(bash scripts/bazel_clang.sh info bazel-bin 2>/dev/null)/tests/fuzz

# --- Seeds ----------------------------------------------------------------------------------------
seed() {  # target, files...
  local t=$1 f
  shift
  mkdir -p "$out/corpus/$t"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$out/corpus/$t/$(echo "$f" | tr '/' '_')"; done
}
shopt -s nullglob
seed open_verify_fuzzer testdata/*.nrt
seed dtensor_program_fuzzer testdata/dtensor.nrt
seed json_form_fuzzer testdata/*.nrt.json
seed execution_plan_fuzzer testdata/*.nrt.json
# Inputs earlier campaigns found interesting (small files, committed).
for t in "${targets[@]}"; do seed "$t" tests/fuzz/seeds/"$t"/*; done
# Programs torch exported, as .nrt.json: real op mixes for the executor (when nrt-inspect is built).
if [ -x bazel-bin/cli/nrt-inspect ]; then
  for f in testdata/torch/*/model.pt2; do
    name=$(basename "$(dirname "$f")")
    bazel-bin/cli/nrt-inspect convert "$f" -o "$out/corpus/execution_plan_fuzzer/torch_$name.nrt.json" -q 2>/dev/null || true
  done
fi
seed pt2_archive_fuzzer testdata/torch/*/model.pt2 testdata/torch/dtensor_mlp/model_rank*.pt2
seed torch_pickle_fuzzer testdata/torch/pickled_tensors/*.pt
# The weight records of torch's per-rank DTensor archives (torch.save zips) and their pickles.
python3 - "$out/corpus/torch_pickle_fuzzer" testdata/torch/dtensor_mlp*/model_rank0.pt2 <<'PY' || true
import io, os, sys, zipfile
out = sys.argv[1]
for path in sys.argv[2:]:
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if "/data/weights/weight_" not in name:
                continue
            record = archive.read(name)
            stem = os.path.join(out, path.replace("/", "_") + "_" + os.path.basename(name))
            open(stem + ".zip", "wb").write(record)
            with zipfile.ZipFile(io.BytesIO(record)) as saved:
                pkl = next(n for n in saved.namelist() if n.endswith("data.pkl"))
                open(stem + ".pkl", "wb").write(saved.read(pkl))
PY
seed torch_json_fuzzer ../shared/conformance/torch_export/*.json
shopt -u nullglob
if [ -x "$bin/make_fuzz_seeds" ]; then
  "$bin/make_fuzz_seeds" "$out/corpus/open_verify_fuzzer" "$out/corpus/json_form_fuzzer" \
    || echo "fuzz.sh: make_fuzz_seeds failed; fuzzing from the other seeds" >&2
else
  echo "fuzz.sh: make_fuzz_seeds did not build (see $out/logs/build.log)" >&2
fi

# --- Fuzzing --------------------------------------------------------------------------------------
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${targets[@]}"; do
  # After a failed build a binary left from an earlier one may be stale: each target is built again.
  if [ "$built_together" -eq 0 ] && ! bash scripts/bazel_clang.sh build --noshow_progress "//tests/fuzz:$t" \
       >"$out/logs/build_$t.log" 2>&1; then
    echo "fuzz.sh: $t does not build:" >&2
    tail -n 40 "$out/logs/build_$t.log" >&2
    echo "fuzz: $t not built, 1 crashes"
    status=1
    continue
  fi
  log="$out/logs/$t.log"
  before=$(find "$out/artifacts" -name "$t-*" | wc -l)
  # shellcheck disable=SC2046  # -runs only when NRT_FUZZ_RUNS asks for a number of executions
  "$bin/$t" -max_total_time="$duration" $([ -n "${NRT_FUZZ_RUNS:-}" ] && echo "-runs=$NRT_FUZZ_RUNS") \
    -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$out/artifacts/$t-" "$out/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  crashes=$(($(find "$out/artifacts" -name "$t-*" | wc -l) - before))
  if ((rc != 0)); then
    ((crashes > 0)) || crashes=1
    status=1
    echo "fuzz.sh: $t exited with $rc; the end of $log:" >&2
    tail -n 40 "$log" >&2
  fi
  echo "fuzz: $t ${execs:-0} execs, $crashes crashes"
done
exit "$status"

#!/usr/bin/env bash
# Sets up, builds and runs every test of nrt: unit, CLI and mpirun tests (gcc, warnings are
# errors), the tests of everything that parses untrusted bytes or runs what they load again under
# clang's ASan+UBSan, the threaded tests under TSan, the fuzz targets for a bounded time (built in
# the ASan+UBSan tree), and the benchmark smokes. `.ci/run` calls this script.
#
# Counting: `N passed, N failed` sums test cases (a gtest case, a shell test's check, a fuzz
# target, a benchmark smoke). The sanitizer reruns are reported on a line of their own: their
# failures fail the run, their passes are not added again. Benchmark targets are reported, met or
# missed, and a missed one is not a failure (machines are noisy). Each step's wall time is printed
# as it ends and in a table at the end, and what failed (a line per failed case, fuzz target, smoke or
# build) is listed again after it: CI keeps only the end of the log.
#
# Bazel keeps every action in a disk cache under ~/.cache/nrt (.bazelrc), so a second run, or a
# fresh clone on the same machine, reuses what was built and tested.
#
# Environment: NRT_FUZZ_TOTAL_SECONDS (default 150: the fuzz step's running time, shared by the
# targets); CI=true (set by .ci/run) turns a test that reports itself skipped into a failure.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0 failed=0 skipped=0
# Every benchmark's `target:` lines (bench/bench_target.h), for the summary.
target_log=$(mktemp)
# What failed, a line each, repeated at the end (CI shows only the end of its log).
failure_log=$(mktemp)
add() { passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + ${3:-0})); }

# Steps and their wall times.
step_names=() step_seconds=() step_name="" step_started=0
end_step() {
  [ -n "$step_name" ] || return 0
  local took=$((SECONDS - step_started))
  step_names+=("$step_name")
  step_seconds+=("$took")
  echo "--- $step_name: ${took} s"
  step_name=""
}
step() { end_step; step_name="$*"; step_started=$SECONDS; echo; echo "=== $* ==="; }

step "setup"
bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

# Tests read the conformance programs in place (../shared/conformance, beside the checkout). Their
# digest is part of the test environment, so a cached result never outlives a change to them.
CONFORMANCE_DIR="$(cd .. && pwd)/shared/conformance"
conformance_digest=$( (cd "$CONFORMANCE_DIR" 2>/dev/null && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) \
  | sha256sum | cut -c1-16)
BAZEL_FLAGS=(--noshow_progress --show_result=0)
TEST_FLAGS=(--test_env=NRT_CONFORMANCE_DIR="$CONFORMANCE_DIR" --test_env=NRT_CONFORMANCE_DIGEST="$conformance_digest")

# run_suite LABEL BAZEL -- BAZEL_ARGS... -- TARGETS...: runs the tests, prints their count and
# sets suite_passed/suite_failed/suite_skipped. BAZEL is the command (bazel or scripts/bazel_clang.sh).
run_suite() {
  local label="$1" bazel="$2"
  shift 3
  local args=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  $bazel test "${BAZEL_FLAGS[@]}" "${TEST_FLAGS[@]}" "${args[@]}" "$@"
  local logs
  logs="$($bazel info "${args[@]}" bazel-testlogs 2>/dev/null)"
  read -r suite_passed suite_failed suite_skipped < <(python3 scripts/count_test_results.py "$logs" "$@" \
    2> >(sed "s|^FAILED: |FAILED ($label): |" | tee -a "$failure_log" >&2))
  echo "$label: $suite_passed passed, $suite_failed failed, $suite_skipped skipped"
}

# Every test target in the repository.
step "build (gcc, warnings are errors)"
# Tests tagged "gpu" need a CUDA device: built here (CI compiles all CUDA code), run by
# scripts/gpu_check.sh on a GPU machine.
mapfile -t TESTS < <(bazel query 'tests(//...) except attr(tags, gpu, //...)' 2>/dev/null | sort)
if ! bazel build "${BAZEL_FLAGS[@]}" //...; then
  echo "FAILED (build): bazel build //... (gcc)" | tee -a "$failure_log"
  add 0 1
fi

step "tests"
run_suite "tests" bazel -- -- "${TESTS[@]}"
add "$suite_passed" "$suite_failed" "$suite_skipped"

# The Python package: its wheel installed into a fresh venv, the pytest suite (every call, the
# torch corpus, the CLI's answers), `pip install .`, and the Python layer's benchmark smoke.
step "python package (wheel, fresh venv, pytest, benchmark smoke)"
python_xml=$(mktemp --suffix=.xml)
gcc_bin=$(bazel info bazel-bin 2>/dev/null)
NRT_INSPECT="$gcc_bin/cli/nrt-inspect" NRT_TEST_KERNEL_LIBRARY="$gcc_bin/tests/executor/libenum_probe_kernels.so" \
  bash tests/python/python_package_test.sh "$python_xml" 2>&1 | tee -a "$target_log"
python_status=${PIPESTATUS[0]}
read -r suite_passed suite_failed suite_skipped < <(python3 scripts/count_test_results.py --xml "$python_xml" \
  2> >(sed "s|^FAILED: [^:]*: |FAILED (python package): |" | tee -a "$failure_log" >&2))
if [ "$python_status" -ne 0 ] && [ "$suite_failed" -eq 0 ]; then
  echo "FAILED (python package): tests/python/python_package_test.sh exited with $python_status" | tee -a "$failure_log"
  suite_failed=1
fi
echo "python package: $suite_passed passed, $suite_failed failed, $suite_skipped skipped"
add "$suite_passed" "$suite_failed" "$suite_skipped"
rm -f "$python_xml"

# Everything that parses untrusted bytes (serializer, verifier, torch.export import), the executor
# that runs what they load with its kernels (their NumPy goldens), and the command-line tools
# again under clang's ASan+UBSan: not the mpirun tests, nor the tests that time big files.
sanitizer_lines=()
ASAN_EXECUTOR='executor_test|execution_plan_test|control_flow_test|collective_kernels_test|torch_corpus_test|npy_test|sym_expr_test|memory_planner_test|memory_budget_test|in_place_target_test|concurrent_runs_test|async_collectives_test|device_allocator_test|collective_hooks_test|nrt_run_test|compare_outputs_test|kernel_registry_test|rank_agreement_test|collective_schedule_test'
mapfile -t SANITIZED < <(printf '%s\n' "${TESTS[@]}" |
  grep -E "^//tests(/core|/verify|/torch_export|/files|/kernels|/cli|/meta)?:|^//tests/executor:(${ASAN_EXECUTOR})\$|^//tests/executor/dtensor:(sharding_(math|rules)|op_registry)_test\$|^//tests/session:session_test\$")
step "ASan+UBSan: build (clang, tests and fuzz targets in one tree)"
if ! bash scripts/bazel_clang.sh build "${BAZEL_FLAGS[@]}" "${SANITIZED[@]}" //tests/fuzz:fuzz_targets //tests/fuzz:make_fuzz_seeds; then
  echo "FAILED (build): the ASan+UBSan build (clang); its tests below count what did not build" | tee -a "$failure_log"
fi
step "ASan+UBSan: tests"
run_suite "ASan+UBSan rerun" "bash scripts/bazel_clang.sh" -- -- "${SANITIZED[@]}"
sanitizer_lines+=("ASan+UBSan rerun of ${#SANITIZED[@]} test targets: $suite_passed passed, $suite_failed failed, $suite_skipped skipped")
add 0 "$suite_failed"

# One loaded program run from 8 threads at once, and the watchdog's thread beside traced groups,
# under ThreadSanitizer (its own output tree: only these targets and their dependencies).
step "TSan: threaded tests"
TSAN_TESTS=(//tests/executor:concurrent_runs_test //tests/executor:collective_hooks_test //tests/executor:intra_op_threads_test)
# --symlink_prefix=/: bazel-bin stays the gcc tree's (the benchmark smokes below run from it).
run_suite "TSan rerun" bazel -- --config=tsan --symlink_prefix=/ -- "${TSAN_TESTS[@]}"
sanitizer_lines+=("TSan rerun of ${#TSAN_TESTS[@]} test targets: $suite_passed passed, $suite_failed failed, $suite_skipped skipped")
add 0 "$suite_failed"

step "fuzz targets"
fuzz_targets=$(ls tests/fuzz/*_fuzzer.cc | wc -l)
fuzz_seconds=$(( ${NRT_FUZZ_TOTAL_SECONDS:-150} / fuzz_targets ))
((fuzz_seconds > 0)) || fuzz_seconds=1
echo "fuzz: $fuzz_targets targets, ${fuzz_seconds} s each (campaigns: scripts/fuzz.sh)"
fuzz_log=$(mktemp)
bash scripts/fuzz.sh "$fuzz_seconds" 2>&1 | tee "$fuzz_log"
ok=$(grep -c '^fuzz: .* 0 crashes$' "$fuzz_log")
grep '^fuzz: ' "$fuzz_log" | grep -v ' 0 crashes$' | sed 's/^/FAILED (fuzz): /' >> "$failure_log"
ran=$(grep -c '^fuzz: [a-z0-9_]* ' "$fuzz_log")
add "$ok" $((ran - ok))
[ "$ran" -eq "$fuzz_targets" ] || { echo "FAILED (fuzz): $ran of $fuzz_targets targets reported" | tee -a "$failure_log"; add 0 1; }
rm -f "$fuzz_log"

# Each smoke passes or fails on its exit status; the `target:` lines it prints (bench/bench_target.h)
# are collected for the summary.
step "benchmark smokes"
smoke() {  # smoke NAME COMMAND...
  local name="$1" status
  shift
  "$@" 2>&1 | tee -a "$target_log"
  status=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ]; then add 1 0; else echo "FAILED (benchmark smoke): $name (exit $status)" | tee -a "$failure_log"; add 0 1; fi
}
for bench in $(bazel query 'kind(cc_binary, //bench/...) except attr(tags, gpu, //...)' 2>/dev/null); do
  bin="$gcc_bin/${bench#//}"; bin="${bin/://}"
  smoke "$bench" env NRT_BENCH_SMOKE=1 "$bin" --smoke
done
# The overlap, collective and DTensor benchmarks measure something only across ranks: once more under
# mpirun -np 2.
if command -v mpirun > /dev/null 2>&1; then
  for bench in overlap_bench collective_bench dtensor_bench; do
    smoke "$bench under mpirun -np 2" \
      timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "$gcc_bin/bench/executor/$bench" --smoke
  done
fi
end_step

echo
echo "=== summary ==="
total=0
printf '%-64s %8s\n' "step" "seconds"
for i in "${!step_names[@]}"; do
  printf '%-64s %8d\n' "${step_names[$i]}" "${step_seconds[$i]}"
  total=$((total + step_seconds[i]))
done
printf '%-64s %8d\n' "total" "$total"
met=$(grep -c '^target: .*: met$' "$target_log")
missed=$(grep -c '^target: .*: MISSED$' "$target_log")
echo "benchmark targets: $met met, $missed missed (a miss is reported, not failed: shared machines are noisy)"
grep '^target: .*: MISSED$' "$target_log" | sed 's/^/  missed: /'
rm -f "$target_log"
for line in "${sanitizer_lines[@]}"; do echo "$line"; done
if [ -s "$failure_log" ]; then
  echo "what failed ($(wc -l < "$failure_log") lines; the first 60):"
  head -n 60 "$failure_log" | sed 's/^/  /'
fi
rm -f "$failure_log"

# CI runs every test it can: a test that reports itself skipped there (no device test exists yet)
# is a failure, so a missing package or interpreter cannot pass unnoticed.
if [ "${CI:-}" = true ] && [ "$skipped" -gt 0 ]; then
  echo "CI: ${skipped} test(s) reported themselves skipped; every test must run here (see the SKIP lines above)"
  failed=$((failed + skipped))
fi

echo
echo "${passed} passed, ${failed} failed$( [ "$skipped" -gt 0 ] && echo ", ${skipped} skipped")"
[ "$failed" -eq 0 ]

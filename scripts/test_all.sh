#!/usr/bin/env bash
# Sets up, builds and runs every test of nrt: unit and CLI tests, the same tests of the
# serializer and executor under ASan+UBSan, the concurrent-runs test under TSan, the fuzz targets
# for a bounded time, and the benchmark smokes.
# Ends with the line `N passed, N failed[, N skipped]` summed over every suite; exits non-zero
# when anything failed. `.ci/run` calls this script.
#
# Environment: NRT_FUZZ_SECONDS (default 30 per fuzz target).
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0 skipped=0
add() { passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + ${3:-0})); }
step() { echo; echo "=== $* ==="; }

# Tests read the conformance programs in place (../shared/conformance, beside the checkout).
CONFORMANCE_DIR="$(cd .. && pwd)/shared/conformance"
BAZEL_FLAGS=(--noshow_progress --show_result=0)
TEST_FLAGS=(--test_env=NRT_CONFORMANCE_DIR="$CONFORMANCE_DIR")

# Every test target in the repository.
mapfile -t TESTS < <(bazel query 'tests(//...)' 2>/dev/null | sort)

step "build (warnings are errors)"
if ! bazel build "${BAZEL_FLAGS[@]}" //...; then
  echo "build failed"
  add 0 1
fi

run_suite() {  # run_suite LABEL BAZEL_ARGS... -- TARGETS...
  local label="$1"; shift
  local args=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  step "$label"
  bazel test "${BAZEL_FLAGS[@]}" "${TEST_FLAGS[@]}" "${args[@]}" "$@"
  local logs
  logs="$(bazel info "${args[@]}" bazel-testlogs 2>/dev/null)"
  read -r p f s < <(python3 scripts/count_test_results.py "$logs" "$@")
  echo "$label: $p passed, $f failed, $s skipped"
  add "$p" "$f" "$s"
}

run_suite "tests" -- "${TESTS[@]}"

# The tests of everything that parses untrusted bytes (serializer, verifier, torch.export import)
# and of the executor that runs what they load (not its mpirun tests) again under ASan+UBSan, in
# a separate output tree.
EXECUTOR_SANITIZED='executor_test|execution_plan_test|control_flow_test|collective_kernels_test|torch_corpus_test|npy_test|sym_expr_test|memory_planner_test|memory_budget_test|in_place_target_test|concurrent_runs_test|async_collectives_test|device_allocator_test|collective_hooks_test'
mapfile -t SANITIZED < <(printf '%s\n' "${TESTS[@]}" |
  grep -E "^//tests(/core|/verify|/torch_export|/files)?:|^//tests/executor:(${EXECUTOR_SANITIZED})\$|^//tests/executor/distributed:sharding_(math|rules)_test\$")
run_suite "tests under ASan+UBSan" --config=asan -- "${SANITIZED[@]}"

# One loaded program run from 8 threads at once, and the watchdog's thread beside traced groups,
# under ThreadSanitizer (its own output tree).
run_suite "threads under TSan" --config=tsan -- //tests/executor:concurrent_runs_test //tests/executor:collective_hooks_test

step "fuzz targets"
if [ -x scripts/fuzz.sh ]; then
  fuzz_log=$(mktemp)
  if bash scripts/fuzz.sh "${NRT_FUZZ_SECONDS:-30}" 2>&1 | tee "$fuzz_log"; then :; fi
  ok=$(grep -c '^fuzz: .* 0 crashes' "$fuzz_log" || true)
  bad=$(grep -c '^fuzz: ' "$fuzz_log" || true); bad=$((bad - ok))
  [ "$ok" -eq 0 ] && bad=$((bad > 0 ? bad : 1))
  add "$ok" "$bad"
  rm -f "$fuzz_log"
fi

step "benchmark smokes"
for bench in $(bazel query 'kind(cc_binary, //bench/...)' 2>/dev/null); do
  bin="bazel-bin/${bench#//}"; bin="${bin/://}"
  if NRT_BENCH_SMOKE=1 "$bin" --smoke; then add 1 0; else echo "FAILED: $bench"; add 0 1; fi
done
# The overlap, collective and DTensor benchmarks measure something only across ranks: once more under
# mpirun -np 2.
if command -v mpirun > /dev/null 2>&1; then
  for bench in overlap_bench collective_bench dtensor_bench; do
    if timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "bazel-bin/bench/executor/$bench" --smoke; then
      add 1 0
    else
      echo "FAILED: $bench under mpirun -np 2"; add 0 1
    fi
  done
fi

# CI runs every test it can: a test that reports itself skipped there (no device test exists yet)
# is a failure, so a missing package or interpreter cannot pass unnoticed.
if [ "${CI:-}" = true ] && [ "$skipped" -gt 0 ]; then
  echo "CI: ${skipped} test(s) reported themselves skipped; every test must run here (see the SKIP lines above)"
  failed=$((failed + skipped))
fi

echo
echo "${passed} passed, ${failed} failed$( [ "$skipped" -gt 0 ] && echo ", ${skipped} skipped")"
[ "$failed" -eq 0 ]

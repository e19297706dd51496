#!/usr/bin/env bash
# Builds every libFuzzer target in tests/fuzz/ (*_fuzzer.cc) with clang, ASan and UBSan — Debian's
# Bazel 4 builds with gcc, so this script compiles directly — seeds their corpora, runs each for
# SECONDS (default 30) and prints one line per target:
#
#   fuzz: <target> <N> execs, <K> crashes
#
# Exits non-zero when a target crashed or did not build. Everything it writes lives under
# out/fuzz/ (ignored by git): objects, binaries, corpora (kept between runs, so they grow), logs,
# and crash inputs in out/fuzz/artifacts/ (reproduce: out/fuzz/<target> <file>).
#
# What a target links comes from Bazel's graph: the cc_library that lists each project header the
# target includes, with that library's dependencies (their sources, defines and linkopts).
# Seeds: open_verify_fuzzer testdata/*.nrt, json_form_fuzzer testdata/*.nrt.json (both also the
# verifier tests' sample program), execution_plan_fuzzer testdata/*.nrt.json and the torch corpus
# converted to .nrt.json, pt2_archive_fuzzer testdata/torch/*/model.pt2,
# torch_json_fuzzer ../shared/conformance/torch_export/*.json, flight_recorder_dump_fuzzer dumps nrt-run
# wrote (in its seeds folder); every target also tests/fuzz/seeds/<target>/
# (inputs a campaign found interesting).
#
# Usage: scripts/fuzz.sh [SECONDS]
# A campaign (by hand): NRT_FUZZ_RUNS=1000000 scripts/fuzz.sh 7200 runs each target until one
# million executions or two hours, whichever comes first; NRT_FUZZ_TARGETS="a_fuzzer b_fuzzer"
# runs only those. Inputs the campaign found interesting stay in out/fuzz/corpus/<target>/.
# Environment: CXX (default clang++-14); NRT_SERIALIZER_DIR compiles serializer/'s sources from
# another directory (e.g. a patched copy of serializer/) instead.
set -uo pipefail
cd "$(dirname "$0")/.."

duration=${1:-30}
CXX=${CXX:-clang++-14}
serializer_dir=${NRT_SERIALIZER_DIR:-serializer}
out=out/fuzz
flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
       -I. -Ibazel-bin)
mkdir -p "$out/obj" "$out/artifacts" "$out/logs" "$out/targets"
rm -f "$out"/targets/*
: >"$out/logs/bazel.log"

targets=()
for f in tests/fuzz/*_fuzzer.cc; do
  t=$(basename "$f" .cc)
  # NRT_FUZZ_TARGETS (space-separated names) picks a subset, e.g. for a campaign.
  if [ -n "${NRT_FUZZ_TARGETS:-}" ] && [[ " $NRT_FUZZ_TARGETS " != *" $t "* ]]; then continue; fi
  targets+=("$t")
done
status=0
declare -A broken  # target -> why it cannot be built
not_built() {
  echo "fuzz.sh: $1: $2" >&2
  echo "fuzz: $1 not built, 1 crashes"
  status=1
}

# --- Which libraries, sources, defines and link options each target needs -----------------------

# The project cc_libraries that list the project headers `$1` (a source file) includes.
libraries_for() {
  local h pkgs=() labels=()
  for h in $(sed -n 's/^#include "\(.*\)"/\1/p' "$1"); do
    [ -f "$(dirname "$h")/BUILD.bazel" ] || [ -f "$(dirname "$h")/BUILD" ] || continue
    pkgs+=("//$(dirname "$h"):*")
    labels+=("//$(dirname "$h"):$(basename "$h")")
  done
  ((${#labels[@]})) || return 0
  bazel query "kind(cc_library, rdeps(set(${pkgs[*]}), set(${labels[*]}), 1))" 2>>"$out/logs/bazel.log"
}

# Writes $out/targets/<target>.{srcs,defines,libs}: the project sources (workspace paths) of the
# libraries and their dependencies, their defines (-D...) and link options.
resolve() {
  local t=$1 libs build
  mapfile -t libs < <(libraries_for "tests/fuzz/$t.cc")
  if ((${#libs[@]} == 0)); then
    broken[$t]="no Bazel cc_library lists the headers it includes"
    return
  fi
  build=$(bazel query "kind(cc_library, deps(set(${libs[*]})))" --output=build 2>>"$out/logs/bazel.log")
  attribute() { sed -n "s/^  $1 = \[\(.*\)\],*\$/\1/p" <<<"$build" | tr ',' '\n' | tr -d ' "' | sed '/^$/d'; }
  attribute srcs | sed -n 's|^//\([^:]*\):\(.*\.cc\)$|\1/\2|p' | sed "s|^serializer/|$serializer_dir/|" \
    | sort -u >"$out/targets/$t.srcs"
  attribute defines | sed 's/^/-D/' | sort -u >"$out/targets/$t.defines"
  attribute linkopts | sort -u >"$out/targets/$t.libs"
  [ -s "$out/targets/$t.srcs" ] || broken[$t]="its libraries have no sources (see $out/logs/bazel.log)"
}

# Generated code (schema/nrt_generated.h, nrt_bfbs.cc, ...) comes from Bazel.
if ! bazel build --noshow_progress //schema >>"$out/logs/bazel.log" 2>&1; then
  for t in "${targets[@]}"; do not_built "$t" "bazel build //schema failed (see $out/logs/bazel.log)"; done
  exit 1
fi
for t in "${targets[@]}"; do resolve "$t"; done

# --- Compiling ----------------------------------------------------------------------------------

# One set of flags for every object (the defines of all targets together), so objects are shared.
mapfile -t defines < <(cat "$out"/targets/*.defines 2>/dev/null | sort -u)
export CXX FLAGS="${flags[*]} ${defines[*]} -fsanitize=fuzzer-no-link -MMD"
[ "$(cat "$out/obj/flags" 2>/dev/null)" = "$CXX $FLAGS" ] || rm -f "$out"/obj/*.o
echo "$CXX $FLAGS" >"$out/obj/flags"
object_of() { echo "$out/obj/$(echo "${1%.cc}" | tr '/' '_').o"; }
# True when the object of source $1 is missing or older than a file its dependency list names.
stale() {
  local object deps dep
  object=$(object_of "$1")
  deps=${object%.o}.d
  [ -f "$object" ] && [ -f "$deps" ] || return 0
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$deps"); do [ "$dep" -nt "$object" ] && return 0; done
  return 1
}
generated=(bazel-bin/schema/nrt_bfbs.cc)
mapfile -t all_srcs < <(cat "$out"/targets/*.srcs 2>/dev/null; printf '%s\n' "${generated[@]}" \
  tests/verify/sample_program.cc)
mapfile -t all_srcs < <(printf '%s\n' "${all_srcs[@]}" | sort -u)
# Two compilers at a time: the machine is shared. A source that fails to compile leaves a .failed
# mark and breaks only the targets that need it.
for s in "${all_srcs[@]}"; do
  if stale "$s"; then printf '%s\n%s\n' "$s" "$(object_of "$s")"; fi
done | xargs -r -d '\n' -P 2 -n 2 sh -c 'rm -f "${1%.o}.failed"
  $CXX $FLAGS -c "$0" -o "$1" 2>"${1%.o}.log" || { touch "${1%.o}.failed"; cat "${1%.o}.log" >&2; }' \
  2>"$out/logs/compile.log"
built() { local o; o=$(object_of "$1"); [ -f "$o" ] && [ ! -e "${o%.o}.failed" ]; }

# Objects of a target; fails (printing the compiler's complaint) when one did not build.
objects_of() {
  local s
  for s in $(cat "$out/targets/$1.srcs") "${generated[@]}"; do
    if ! built "$s"; then
      echo "compiling $s failed: $(cat "$(object_of "$s" | sed 's/\.o$/.log/')" 2>/dev/null)" >&2
      return 1
    fi
    object_of "$s"
  done
}

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
    mkdir -p "$out/corpus/execution_plan_fuzzer"
    bazel-bin/cli/nrt-inspect convert "$f" -o "$out/corpus/execution_plan_fuzzer/torch_$name.nrt.json" -q 2>/dev/null || true
  done
fi
seed pt2_archive_fuzzer testdata/torch/*/model.pt2
seed torch_json_fuzzer ../shared/conformance/torch_export/*.json
shopt -u nullglob
if [ -f "$out/targets/open_verify_fuzzer.srcs" ] && [ -z "${broken[open_verify_fuzzer]:-}" ] \
   && seed_objects=$(objects_of open_verify_fuzzer 2>/dev/null) \
   && built tests/verify/sample_program.cc \
   && "$CXX" $FLAGS tests/fuzz/make_fuzz_seeds.cc "$(object_of tests/verify/sample_program.cc)" $seed_objects \
        $(cat "$out/targets/open_verify_fuzzer.libs") -o "$out/make_fuzz_seeds" >"$out/logs/link_seeds.log" 2>&1; then
  mkdir -p "$out/corpus/open_verify_fuzzer" "$out/corpus/json_form_fuzzer"
  "$out/make_fuzz_seeds" "$out/corpus/open_verify_fuzzer" "$out/corpus/json_form_fuzzer" \
    || echo "fuzz.sh: make_fuzz_seeds failed; fuzzing from the other seeds" >&2
elif [ -n "${broken[open_verify_fuzzer]+set}" ] || [ -f "$out/targets/open_verify_fuzzer.srcs" ]; then
  echo "fuzz.sh: make_fuzz_seeds did not build (see $out/logs/link_seeds.log)" >&2
fi

# --- Linking and fuzzing --------------------------------------------------------------------------

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for t in "${targets[@]}"; do
  if [ -n "${broken[$t]:-}" ]; then
    not_built "$t" "${broken[$t]}"
    continue
  fi
  if ! objects=$(objects_of "$t" 2>"$out/logs/objects_$t.log"); then
    not_built "$t" "$(cat "$out/logs/objects_$t.log")"
    continue
  fi
  # shellcheck disable=SC2086  # word lists: object paths and link options have no spaces
  if ! "$CXX" $FLAGS -fsanitize=fuzzer "tests/fuzz/$t.cc" $objects $(cat "$out/targets/$t.libs") -o "$out/$t" \
       >"$out/logs/link_$t.log" 2>&1; then
    not_built "$t" "$(cat "$out/logs/link_$t.log")"
    continue
  fi
  mkdir -p "$out/corpus/$t"
  log="$out/logs/$t.log"
  before=$(find "$out/artifacts" -name "$t-*" | wc -l)
  # shellcheck disable=SC2046  # -runs only when NRT_FUZZ_RUNS asks for a number of executions
  "$out/$t" -max_total_time="$duration" $([ -n "${NRT_FUZZ_RUNS:-}" ] && echo "-runs=$NRT_FUZZ_RUNS") \
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

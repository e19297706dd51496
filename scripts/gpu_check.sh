#!/usr/bin/env bash
# The checks that need a CUDA device, in two halves:
#
#   bash scripts/gpu_check.sh --prepare   here (Bazel, Debian's libraries): builds nrt-run and the
#                                         CUDA kernel test and gathers them, with the shared
#                                         libraries ldd names (not libc's family, not CUDA's),
#                                         stripped and packed into .gpu/bundle.tar.xz (~11 MB;
#                                         ignored by git; the device tool carries .gpu)
#   bash scripts/gpu_check.sh             on the GPU machine (no Bazel, no Debian packages): runs
#                                         the CUDA kernel test, every model in testdata/torch on
#                                         cuda:0 against the CPU executor, the benchmark
#                                         (bench/cuda/cuda_bench.cc, torch's sdpa beside it), and
#                                         prints a table.
#
# The full log goes to $OUT/gpu_check.log when OUT is set (the device tool's folder), else
# /tmp/gpu_check.log. Exit status: 0 when the kernel test and every model that has all its
# kernels on CUDA passed.
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=.gpu

if [ "${1:-}" = "--prepare" ]; then
  bazel build --noshow_progress //cli:nrt-run //tests/cuda:cuda_kernels_test //tests/cuda:philox_device_test \
    //bench/cuda:cuda_bench || exit 1
  rm -rf "$BUNDLE" && mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
  bin=$(bazel info bazel-bin 2>/dev/null)
  cp "$bin/cli/nrt-run" "$bin/tests/cuda/cuda_kernels_test" "$bin/tests/cuda/philox_device_test" \
    "$bin/bench/cuda/cuda_bench" "$BUNDLE/bin/"
  for exe in "$BUNDLE"/bin/*; do
    ldd "$exe" | awk '$3 ~ /^\// {print $3}'
  done | sort -u | grep -v -E '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so|/usr/local/cuda' |
    xargs -r cp -L -t "$BUNDLE/lib/"
  strip "$BUNDLE"/bin/* && strip --strip-unneeded "$BUNDLE"/lib/*
  tar -C "$BUNDLE" -cJf "$BUNDLE/bundle.tar.xz" bin lib && rm -rf "$BUNDLE/bin" "$BUNDLE/lib"
  grep -qxF "/$BUNDLE/" .git/info/exclude 2>/dev/null || echo "/$BUNDLE/" >> .git/info/exclude
  du -sh "$BUNDLE/bundle.tar.xz"
  exit 0
fi

LOG="${OUT:-/tmp}/gpu_check.log"
exec > >(tee "$LOG") 2>&1
if [ -f "$BUNDLE/bundle.tar.xz" ]; then
  BUNDLE=$(mktemp -d)
  tar -C "$BUNDLE" -xJf .gpu/bundle.tar.xz || exit 1
fi
# CUDA's libraries: the toolkit's, else those pip installed beside torch.
cuda_libs=/usr/local/cuda/lib64
for d in $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, s, "lib") for p in nvidia.__path__ for s in os.listdir(p)))' 2>/dev/null); do
  cuda_libs="$cuda_libs:$d"
done
export LD_LIBRARY_PATH="$(cd "$BUNDLE" && pwd)/lib:$cuda_libs:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
RUN="$BUNDLE/bin/nrt-run"
status=0

echo "=== CUDA kernels against the CPU kernels"
if timeout 300 "$BUNDLE/bin/cuda_kernels_test" --gtest_brief=1; then kernels="passed"; else kernels="FAILED"; status=1; fi
echo "=== Philox on the device against the host"
if timeout 120 "$BUNDLE/bin/philox_device_test" --gtest_brief=1; then philox="passed"; else philox="FAILED"; status=1; fi

echo "=== testdata/torch on cuda:0 against the CPU executor"
rows=()
ran=0 matched=0 missing=0 failed=0
work=$(mktemp -d)
for dir in testdata/torch/*/; do
  name=$(basename "$dir")
  model=$(ls "$dir"model.pt2 2>/dev/null) || continue
  case "$name" in collectives|cond_collective|custom_op_enums) continue ;; esac  # mpirun / a kernel library
  ran=$((ran + 1))
  # Tolerances per dtype as the corpus test's; random inputs, the same on both devices.
  if ! timeout 120 "$RUN" "$model" --random-inputs 7 --output-dir "$work/$name" -q > /dev/null 2>&1; then
    rows+=("$name|cpu run failed|"); failed=$((failed + 1)); continue
  fi
  out=$(timeout 120 "$RUN" "$model" --random-inputs 7 --device cuda --expect "$work/$name" --atol 1e-4 --rtol 1e-3 -q 2>&1)
  code=$?
  if [ $code -eq 0 ]; then
    rows+=("$name|match|"); matched=$((matched + 1))
  elif grep -q "NRT-E1001" <<< "$out"; then
    rows+=("$name|missing kernels|$(grep -o "aten::[a-z_0-9.]*\|higher_order::[a-z_]*" <<< "$out" | sort -u | tr '\n' ' ')")
    missing=$((missing + 1))
  else
    rows+=("$name|FAILED (exit $code)|$(tail -c 300 <<< "$out" | tr '\n' ' ')"); failed=$((failed + 1)); status=1
  fi
done
rm -rf "$work"

echo "=== a profiled run on cuda:0 (each node waited for)"
timeout 60 "$RUN" testdata/torch/transformer_block/model.pt2 --random-inputs 1 --device cuda --repeat 5 --profile 2>&1 | head -24 || status=1

echo "=== benchmark (bench/cuda/cuda_bench.cc)"
bench_out=$(timeout 240 "$BUNDLE/bin/cuda_bench" 2>&1) || status=1
echo "$bench_out"
# torch's attention at the benchmark's shape, on the same device (the machine's own torch).
torch_sdpa=$(timeout 120 python3 - <<'PY' 2>&1
import torch, torch.nn.functional as F
q = torch.randn(4, 16, 1024, 64, device="cuda", dtype=torch.bfloat16)
for _ in range(3): F.scaled_dot_product_attention(q, q, q)
times = []
for _ in range(10):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); F.scaled_dot_product_attention(q, q, q); e.record(); torch.cuda.synchronize()
    times.append(s.elapsed_time(e))
print(f"torch {torch.__version__} sdpa bf16 [4, 16, 1024, 64]: {sorted(times)[5]:.3f} ms")
PY
) || torch_sdpa="torch sdpa: not measured ($torch_sdpa)"

echo
echo "=== summary"
echo "cuda_kernels_test: $kernels"
echo "philox_device_test: $philox"
printf '%-36s %-16s %s\n' model result detail
for r in "${rows[@]}"; do IFS='|' read -r n s d <<< "$r"; printf '%-36s %-16s %s\n' "$n" "$s" "${d:0:160}"; done
echo "models: $ran run, $matched match the CPU, $missing lack CUDA kernels, $failed failed"
echo
grep -E "^(host to device|elementwise|mm|sdpa|launch)" <<< "$bench_out"
echo "$torch_sdpa"
exit $status

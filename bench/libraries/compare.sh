#!/usr/bin/env bash
# Builds and runs bench/libraries/library_compare.cc (by hand, never in CI): GEMM and GEMV through
# Debian's OpenBLAS 0.3.21 (what nrt uses), PyPI's scipy-openblas32 0.3.34 and Debian's oneDNN 2.6;
# exp, tanh and erf-gelu through std::, nrt's own loops and Sleef 3.5. Then
# bench/libraries/weight_layouts.cc: oneDNN's matmul with linear's weights in each layout. One
# thread each.
#   bash bench/libraries/compare.sh [--smoke]
# Installs libdnnl-dev and libsleef-dev (apt, as root) and scipy-openblas32 into a venv under
# ${NRT_BENCH_VENV:-/tmp/nrt-bench-venv} when missing. Never sets OPENBLAS_CORETYPE.
set -eu
cd "$(dirname "$0")/../.."
dpkg -s libdnnl-dev libsleef-dev > /dev/null 2>&1 || apt-get install -y -q libdnnl-dev libsleef-dev > /dev/null
venv=${NRT_BENCH_VENV:-/tmp/nrt-bench-venv}
[ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q scipy-openblas32==0.3.34.481.3
lib=$("$venv/bin/python" -c 'import scipy_openblas32, os; print(os.path.join(os.path.dirname(scipy_openblas32.__file__), "lib"))')
out=$(mktemp -d)
# nrt's loops with the flags its Bazel build gives them (executor/kernels/cpu/BUILD.bazel); the
# benchmark itself for AVX2, Sleef's AVX-512 loops in a file built for AVX-512 and run only on a CPU
# that has it (the AVX-512 column reads 0 elsewhere).
cxx="g++ -std=c++20 -O3 -fno-trapping-math -I. -I/usr/include/x86_64-linux-gnu/openblas-pthread"
$cxx -c executor/kernels/cpu/float_activation_loops.cc -o "$out/loops.o"
$cxx -mavx2 -mfma -c executor/kernels/cpu/float_activation_loops_avx2.cc -o "$out/loops_avx2.o"
$cxx -mavx512f -mavx512dq -mavx2 -mfma -mprefer-vector-width=512 \
  -c executor/kernels/cpu/float_activation_loops_avx512.cc -o "$out/loops_avx512.o"
$cxx -c executor/runtime/intra_op_threads.cc -o "$out/threads.o"
$cxx -mavx512f -c bench/libraries/sleef_avx512.cc -o "$out/sleef_avx512.o"
$cxx -mavx2 -mfma -c bench/libraries/library_compare.cc -o "$out/main.o"
g++ "$out"/*.o -o "$out/library_compare" -lopenblas -ldnnl -lsleef -ldl -lpthread
$cxx -c bench/libraries/weight_layouts.cc -o "$out/weight_layouts.o"
g++ "$out/weight_layouts.o" -o "$out/weight_layouts" -ldnnl
OMP_NUM_THREADS=1 SCIPY_OPENBLAS="$lib/libscipy_openblas.so" "$out/library_compare" "$@"
echo
OMP_NUM_THREADS=1 "$out/weight_layouts" "$@"
rm -rf "$out"

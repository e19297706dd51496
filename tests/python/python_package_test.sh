#!/usr/bin/env bash
# The Python package as its users get it: the wheel scripts/build_wheel.sh writes, installed into
# a fresh venv (no system site-packages) with its one dependency, then tests/python/test_nrt.py
# under pytest; and `pip install .` from the checkout into a second fresh venv, which imports.
#
#   tests/python/python_package_test.sh JUNIT_XML
#
# Run by scripts/test_all.sh after the gcc build (NRT_INSPECT: its nrt-inspect, for the answers
# the package must equal; NRT_TEST_KERNEL_LIBRARY: its tests/executor/libenum_probe_kernels.so). Test-only packages are pinned and come from PyPI.
set -euo pipefail
cd "$(dirname "$0")/../.."
junit="$1"
repo=$(pwd)
python=${NRT_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pins=(numpy==2.2.6 pytest==8.4.2)

wheel=$(bash scripts/build_wheel.sh "$work/dist" | tail -1)
echo "wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB"

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
# The tests import the installed package, never the checkout's python/ folder.
(cd "$work" && NRT_REPO="$repo" NRT_INSPECT="${NRT_INSPECT:?the nrt-inspect to compare with}" \
  NRT_TEST_KERNEL_LIBRARY="${NRT_TEST_KERNEL_LIBRARY:?the kernel library of the custom_op_enums corpus program}" \
  "$work/venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$junit" "$repo/tests/python/test_nrt.py")

# pip install . builds the same package through pyproject.toml's in-tree backend.
"$python" -m venv "$work/venv-source"
"$work/venv-source/bin/pip" install -q --disable-pip-version-check "${pins[0]}"
"$work/venv-source/bin/pip" install -q --disable-pip-version-check "$repo"
(cd "$work" && "$work/venv-source/bin/python" -c \
  'import nrt, sys; p = nrt.load(sys.argv[1]); print("pip install .: nrt", nrt.__version__, p.hash().full)' \
  "$repo/testdata/mlp.nrt")

# The Python layer's benchmark, as a smoke (its `target:` lines go to CI's summary).
(cd "$work" && "$work/venv/bin/python" "$repo/bench/python/runner_bench.py" --smoke)

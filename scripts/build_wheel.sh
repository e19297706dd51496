#!/usr/bin/env bash
# Builds the Python package's wheel: DIST (default dist/)/nrt-<version>-<tags>.whl, for the
# interpreter NRT_PYTHON (default /usr/bin/python3, whose headers python3-dev installs). Prints
# the wheel's path. `pip install .` builds the same wheel through pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${NRT_PYTHON:-/usr/bin/python3}" python/build_backend/nrt_build.py "${1:-dist}"

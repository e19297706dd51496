#!/usr/bin/env bash
# Installs every Debian package nrt needs to build, test, fuzz and benchmark.
# Idempotent: packages already present are left alone; safe to run on every CI run.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap
  flatbuffers-compiler libflatbuffers-dev
  libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev googletest libbenchmark-dev
  libopenmpi-dev openmpi-bin
  libxxhash-dev libssl-dev libsimdjson-dev nlohmann-json3-dev libzip-dev
  libopenblas-dev libdnnl-dev libtcmalloc-minimal4
  clang-14 libclang-rt-14-dev
  python3 python3-numpy python3-dev python3-venv python3-pip
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present" >&2

# nanobind's sources (PyPI; the Python extension module python/ builds them) unpacked where
# WORKSPACE's @nanobind points. The wheel is pure data: unpacking it needs no installer.
NANOBIND_VERSION=3.1.0
NANOBIND_DIR=/opt/nrt/nanobind-${NANOBIND_VERSION}
if [ ! -f "$NANOBIND_DIR/src/nb_combined.cpp" ]; then
  echo "setup: fetching nanobind ${NANOBIND_VERSION} from PyPI" >&2
  download=$(mktemp -d)
  /usr/bin/python3 -m pip download -q --no-deps --only-binary=:all: -d "$download" "nanobind==${NANOBIND_VERSION}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO mkdir -p /opt/nrt
  # Unpacked beside its place, then moved there: an interrupted setup leaves no half tree.
  $SUDO /usr/bin/python3 - "$download"/nanobind-*.whl "$NANOBIND_DIR" <<'PY'
import os, shutil, sys, tempfile, zipfile
wheel, target = sys.argv[1], sys.argv[2]
staging = tempfile.mkdtemp(dir=os.path.dirname(target))
with zipfile.ZipFile(wheel) as z:
    z.extractall(staging)
shutil.rmtree(target, ignore_errors=True)
os.replace(os.path.join(staging, "nanobind"), target)
shutil.rmtree(staging)
PY
  rm -rf "$download"
fi
echo "setup: nanobind ${NANOBIND_VERSION} at ${NANOBIND_DIR}" >&2

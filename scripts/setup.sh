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
  libopenblas-dev
  clang-14 libclang-rt-14-dev
  python3 python3-numpy
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

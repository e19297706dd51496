#!/usr/bin/env bash
# Bazel in the clang ASan+UBSan configuration (.bazelrc's clang-asan: the sanitizer tests and the
# libFuzzer targets), in an output base of its own beside the gcc one: the toolchain Bazel
# configures from CC differs, and sharing one output base would reconfigure and rebuild the other
# tree at each switch. Both share the disk cache. No bazel-* symlinks (they point at the gcc tree):
# `scripts/bazel_clang.sh info bazel-bin` says where the outputs are.
#
# Usage: scripts/bazel_clang.sh COMMAND [ARGS...]   e.g. scripts/bazel_clang.sh test //tests/core:all
set -euo pipefail
cd "$(dirname "$0")/.."
command=$1
shift
exec bazel --output_base="$(bazel info output_base 2>/dev/null)-clang" "$command" --config=clang-asan \
  --symlink_prefix=/ "$@"

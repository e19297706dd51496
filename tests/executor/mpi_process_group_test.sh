#!/usr/bin/env bash
# Runs mpi_process_group_test_bin (gtest) under mpirun with 2 and then 3 ranks. The test passes
# only if every rank of every run passes: mpirun exits non-zero when any rank does, and a hang
# (ranks disagreeing on a collective) is cut by `timeout`. Each rank's gtest XML would race for
# Bazel's one XML file, so the ranks write none; Bazel records this script's outcome instead.
# Without mpirun the test is reported skipped (exit 0, a <skipped/> test case).
set -u

source tests/executor/mpi_test_support.sh
require_mpirun mpi_process_group_test

BIN="tests/executor/mpi_process_group_test_bin"

for ranks in 2 3; do
  echo "=== mpirun -np $ranks $BIN"
  (unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE; mpi 120 -np "$ranks" "$BIN" --gtest_color=no)
  status=$?
  reason="exit status $status"
  [ "$status" -ne 124 ] || reason="timed out after 120 s"
  check "every rank of $ranks passes ($reason)" [ "$status" -eq 0 ]
done
finish

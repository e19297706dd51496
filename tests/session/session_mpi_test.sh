#!/usr/bin/env bash
# Runs session_test_bin (nrt::Session: one program opened, agreed, sharded, bound and run on every
# rank) under mpirun with 2 and 4 ranks (oversubscribed); every rank of every run must pass, and
# each run is cut by `timeout`. Skipped without mpirun.
set -u

source tests/executor/mpi_test_support.sh
require_mpirun session_mpi_test

BIN="tests/session/session_test_bin"
for ranks in 2 4; do
  echo "=== mpirun -np $ranks $BIN"
  (unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE; mpi 120 -np "$ranks" "$BIN" --gtest_color=no)
  status=$?
  check "every rank of $ranks passes (exit status $status)" [ "$status" -eq 0 ]
done
finish

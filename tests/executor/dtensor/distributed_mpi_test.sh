#!/usr/bin/env bash
# Runs distributed_test_bin (redistribution, sharded arg reductions, from_local/to_local nodes) under mpirun with 1, 2, 3 and 4 ranks (oversubscribed); every rank
# of every run must pass, and each run is cut by `timeout`. Skipped without mpirun.
set -u

source tests/executor/mpi_test_support.sh
require_mpirun distributed_mpi_test

gtest_on_ranks tests/executor/dtensor/distributed_test_bin 1 2 3 4
finish

#!/usr/bin/env bash
# Runs session_test_bin (nrt::Session: one program opened, agreed, sharded, bound and run on every
# rank) under mpirun with 2 and 4 ranks (oversubscribed); every rank of every run must pass, and
# each run is cut by `timeout`. Skipped without mpirun.
set -u

source tests/executor/mpi_test_support.sh
require_mpirun session_mpi_test

gtest_on_ranks tests/session/session_test_bin 2 4
finish

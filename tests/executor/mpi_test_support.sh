# Shared by the sh_tests that launch mpirun (source it from the runfiles root); brings
# tests/check_support.sh (check, finish, skip_test, ...) with it:
#   require_mpirun NAME     skip_test unless mpirun is installed
#   mpi SECONDS ARGS...     mpirun as root, oversubscribed, cut after SECONDS, with Open MPI's
#                           session directory (sockets: short paths) outside Bazel's long TMPDIR

source tests/check_support.sh

require_mpirun() {
  command -v mpirun > /dev/null 2>&1 || skip_test "$1" "mpirun is not installed (Debian: openmpi-bin)"
}

mpi_session_dir=$(mktemp -d /tmp/nrt-mpi.XXXXXX)
at_exit 'rm -rf "$mpi_session_dir"'

mpi() {
  local seconds="$1"
  shift
  env TMPDIR="$mpi_session_dir" timeout "$seconds" mpirun --allow-run-as-root --oversubscribe "$@"
}

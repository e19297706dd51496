# Shared by the shell tests (source it from the runfiles root). Every check is one test case in
# Bazel's XML ($XML_OUTPUT_FILE), so scripts/test_all.sh counts checks, not scripts.
#   check DESCRIPTION COMMAND...  one condition: passes when COMMAND exits 0. Write one check per
#                                 condition: in `check D [ a ] && [ b ]` the `&& [ b ]` runs
#                                 outside check and can fail unseen (tests/meta forbids the form)
#   pass DESCRIPTION / fail DESCRIPTION
#                                 record a case decided by the script itself
#   contains FILE TEXT            FILE holds TEXT (prints FILE when it does not)
#   status_in STATUS CODE...      STATUS is one of the CODEs (so a crash, 128+signal, is not)
#   skip_test NAME REASON         report NAME skipped (a <skipped/> case) and exit 0
#   at_exit COMMAND               run COMMAND when the script exits (cleanup)
#   finish                        print the count, write the XML, exit 1 when a check failed or
#                                 none ran
# A script that exits before `finish` (an unset variable, an early exit) still leaves its XML,
# with one more failed case that says so.

# Checks are kept in a file, one "FAILED<TAB>DESCRIPTION" line each (FAILED: 0 or 1), so checks
# made in a subshell count too.
_check_log=$(mktemp "${TEST_TMPDIR:-/tmp}/checks.XXXXXX")
_check_done=0
_check_at_exit=()

_record() {  # _record FAILED DESCRIPTION
  printf '%s\t%s\n' "$1" "${2//$'\n'/ }" >> "$_check_log"
  if [ "$1" -eq 0 ]; then echo "ok: $2"; else echo "FAIL: $2"; fi
}
pass() { _record 0 "$1"; }
fail() { _record 1 "$1"; }

check() {
  local what="$1"
  shift
  if "$@"; then _record 0 "$what"; else _record 1 "$what"; fi
}

contains() { grep -qF -- "$2" "$1" || { echo "--- $1 lacks: $2"; cat "$1"; return 1; }; }

status_in() {
  local status="$1" code
  shift
  for code in "$@"; do [ "$status" -eq "$code" ] && return 0; done
  return 1
}

at_exit() { _check_at_exit+=("$1"); }

_xml_escape() {
  local s="${1//&/\&amp;}"  # \&: bash 5.2 reads a bare & in the replacement as the match
  s="${s//</\&lt;}"
  s="${s//>/\&gt;}"
  s="${s//\"/\&quot;}"
  printf '%s' "$s"
}

_suite_name() { local t="${TEST_TARGET:-$0}"; _xml_escape "${t##*[:/]}"; }

_check_count() { wc -l < "$_check_log"; }
_check_failures() { grep -c $'^1\t' "$_check_log"; }

_write_xml() {
  [ -n "${XML_OUTPUT_FILE:-}" ] || return 0
  local n failures suite failed name
  n=$(_check_count)
  failures=$(_check_failures)
  suite=$(_suite_name)
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuites tests=\"$n\" failures=\"$failures\" errors=\"0\">"
    echo "  <testsuite name=\"$suite\" tests=\"$n\" failures=\"$failures\" errors=\"0\">"
    while IFS=$'\t' read -r failed name; do
      name=$(_xml_escape "$name")
      if [ "$failed" -eq 0 ]; then
        echo "    <testcase name=\"$name\" classname=\"$suite\"/>"
      else
        echo "    <testcase name=\"$name\" classname=\"$suite\"><failure message=\"check failed\"/></testcase>"
      fi
    done < "$_check_log"
    echo "  </testsuite>"
    echo "</testsuites>"
  } > "$XML_OUTPUT_FILE"
}

skip_test() {
  echo "SKIP: $2"
  _check_done=1
  if [ -n "${XML_OUTPUT_FILE:-}" ]; then
    cat > "$XML_OUTPUT_FILE" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" errors="0" skipped="1">
  <testsuite name="$1" tests="1" failures="0" errors="0" skipped="1">
    <testcase name="$1" status="notrun"><skipped message="$(_xml_escape "$2")"/></testcase>
  </testsuite>
</testsuites>
XML
  fi
  exit 0
}

finish() {
  [ "$(_check_count)" -gt 0 ] || fail "the script ran at least one check"
  local n failures
  n=$(_check_count)
  failures=$(_check_failures)
  _check_done=1
  _write_xml
  echo "$((n - failures)) of $n checks passed"
  [ "$failures" -eq 0 ] && exit 0
  exit 1
}

_on_exit() {
  local status=$? command
  if [ "$_check_done" -eq 0 ]; then
    fail "the script reached finish (it exited early with status $status)"
    _write_xml
    [ "$status" -ne 0 ] || status=1
  fi
  for command in "${_check_at_exit[@]}"; do eval "$command"; done
  rm -f "$_check_log"
  exit "$status"
}
trap _on_exit EXIT

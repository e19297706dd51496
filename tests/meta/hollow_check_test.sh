#!/usr/bin/env bash
# The shell tests hold no hollow check: in `check DESCRIPTION [ a ] && [ b ]` (or `|| ...`) only
# `[ a ]` runs inside check; the rest runs after it, where a failure is never counted (a job cut
# by its timeout, exit 124, passed that way). One check per condition instead. Each shell test
# given as an argument is one check; the pattern itself is checked on known good and bad lines.
set -u
source tests/check_support.sh

# A line that starts a check and chains another command after it with && or ||.
hollow='^[[:space:]]*check[[:space:]].*[[:space:]](&&|\|\|)[[:space:]]'

is_hollow() { grep -Eq -- "$hollow" <<< "$1"; }
check "the pattern finds check ... && [ ... ]" is_hollow 'check "both" [ -s a ] && [ -s b ]'
check "the pattern finds check ... || ..." is_hollow '  check "x" [ "$s" -ne 0 ] || true'
check "the pattern passes a single condition" bash -c '! grep -Eq -- "$0" <<< "check \"x\" [ \"\$s\" -ne 0 ]"' "$hollow"
check "the pattern passes a plain && line" bash -c '! grep -Eq -- "$0" <<< "[ -s a ] && echo ok"' "$hollow"

files=("$@")
check "it was given the shell tests (${#files[@]} files)" [ "${#files[@]}" -ge 8 ]
for f in "${files[@]}"; do
  if lines=$(grep -nE -- "$hollow" "$f"); then
    fail "$f has a hollow check"
    echo "$lines"
  else
    pass "$f has no hollow check"
  fi
done
finish

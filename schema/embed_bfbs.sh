#!/bin/sh
# Writes a C++ source that embeds the binary schema (nrt.bfbs) as a byte array, so the
# serializer's JSON form needs no file at run time. Usage: embed_bfbs.sh IN.bfbs OUT.cc
set -eu
in="$1"; out="$2"
{
  echo '// Generated from schema/nrt.fbs by schema/embed_bfbs.sh; do not edit.'
  echo '#include "schema/nrt_bfbs.h"'
  echo 'namespace nrt::schema {'
  echo 'namespace {'
  echo 'const unsigned char kBytes[] = {'
  od -An -v -tx1 "$in" | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
  echo '};'
  echo '}  // namespace'
  echo 'std::span<const unsigned char> binary_schema() { return {kBytes, sizeof(kBytes)}; }'
  echo '}  // namespace nrt::schema'
} > "$out"

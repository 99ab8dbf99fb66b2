#!/usr/bin/env bash
# Every figure, script and piece of evidence must be in the repository: no tracked file may point at
# the folder beside the checkout (`../shared`), which a clone does not have. tests/data holds
# recorded logs, quoted as they were; this file names the pattern to look for.
#   no_outside_references_test.sh SOURCE_DIR
set -uo pipefail
SRC="${1:?source dir}"
if ! git -C "$SRC" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "SKIP: $SRC is not a git checkout"
  exit 77
fi
hits="$(git -C "$SRC" grep -n -I -e '\.\./shared' -- . ':(exclude)tests/data' \
          ':(exclude)tests/scripts/no_outside_references_test.sh')"
if [ -n "$hits" ]; then
  echo "FAIL: tracked files refer to ../shared (outside the repository); cite a file of the repository instead:"
  echo "$hits"
  exit 1
fi
echo "no tracked file outside tests/data refers to ../shared"

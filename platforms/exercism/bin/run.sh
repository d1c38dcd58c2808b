#!/usr/bin/env bash
# An Exercism test runner's entry point:
#   bin/run.sh SLUG INPUT_DIR OUTPUT_DIR
# grades the solution in INPUT_DIR (its src/, in the course's crate) and writes
# OUTPUT_DIR/results.json (Exercism's version 3: a test per check, each with its task_id,
# the requirement it guards), plus junit.xml beside it. It exits with 0 whenever
# results.json was written, whatever the grade, as Exercism's runners do; 1 when it could
# not be; 2 on bad arguments.
#
# Overrides, for a runner image that keeps things elsewhere (and for this repository's
# tests): RATELIMIT_LAB_BIN (the grading command), RATELIMIT_LAB_TEMPLATE (the course
# crate), CARGO_TARGET_DIR (where solutions build; the image builds the course crate's
# dependencies there once).
set -uo pipefail
if [ $# -ne 3 ]; then
  echo "usage: bin/run.sh SLUG INPUT_DIR OUTPUT_DIR" >&2
  exit 2
fi
slug=$1
input=${2%/}
output=${3%/}
# This file is platforms/exercism/bin/run.sh in the course's copy of ratelimit-lab (the
# runner image links /opt/test-runner/bin to that folder).
bin_dir=$(cd -P "$(dirname "$0")" && pwd)
repo=$(cd "$bin_dir/../../.." && pwd)
bin=${RATELIMIT_LAB_BIN:-$repo/target/release/ratelimit-lab}
template=${RATELIMIT_LAB_TEMPLATE:-$repo/templates/learner}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target/learner}
export CARGO_NET_OFFLINE=true

if [ ! -d "$input" ]; then
  echo "$slug: INPUT_DIR $input is not a directory" >&2
  exit 2
fi
mkdir -p "$output" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "$slug: grading $input"
"$bin" submission "$input" --template "$template" --out "$work/out"
if [ -f "$work/out/results.json" ]; then
  cp "$work/out/results.json" "$output/results.json" || exit 1
  cp "$work/out/junit.xml" "$output/junit.xml" 2>/dev/null || true
else
  cat >"$output/results.json" <<'JSON' || exit 1
{"version": 3, "status": "error", "message": "The test runner could not grade this solution (the grading command wrote no report).", "tests": []}
JSON
fi

#!/usr/bin/env bash
# GitHub Classroom's autograding step (see templates/learner/.github/workflows/classroom.yml):
#   bash course/platforms/github-classroom/run.sh SUBMISSION_DIR
# run from the workflow's workspace, where the learner's repository is checked out in
# SUBMISSION_DIR and the course's copy of ratelimit-lab beside it. It builds the grading
# command (unless RATELIMIT_LAB_BIN names one), grades the submission's src/ in the course's
# crate, and sets the step's output `result`: the autograding result (classroom.json) in
# base64, which classroom-resources/autograding-grading-reporter reads. It exits with 0
# whenever the result was set; the reporter fails the run when a check did not pass.
#
# Overrides: RATELIMIT_LAB_BIN (the grading command), RATELIMIT_LAB_TEMPLATE (the course
# crate), CARGO_TARGET_DIR (where submissions build), GITHUB_OUTPUT (set by Actions).
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: run.sh SUBMISSION_DIR" >&2
  exit 2
fi
submission=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
template=${RATELIMIT_LAB_TEMPLATE:-$repo/templates/learner}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target/learner}
output=${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: run this as a GitHub Actions step}

bin=${RATELIMIT_LAB_BIN:-}
if [ -z "$bin" ]; then
  echo "::group::building the grading command"
  CARGO_TARGET_DIR=$repo/target cargo build --release --locked -p ratelimit-lab-instructor \
    --manifest-path "$repo/Cargo.toml" || exit 1
  echo "::endgroup::"
  bin=$repo/target/release/ratelimit-lab
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" submission "$submission" --template "$template" --out "$work/out"
if [ ! -f "$work/out/classroom.json" ]; then
  mkdir -p "$work/out"
  printf '%s' '{"version": 1, "status": "error", "max_score": 0, "tests": [{"name": "grade",
    "status": "error", "score": 0, "message": "the grading command wrote no report",
    "test_code": "", "filename": "", "line_no": 0}]}' >"$work/out/classroom.json"
fi
printf 'result=%s\n' "$(base64 -w 0 "$work/out/classroom.json")" >>"$output"

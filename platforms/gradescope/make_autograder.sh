#!/usr/bin/env bash
# Makes the zip to upload as a Gradescope programming assignment's autograder:
#   platforms/gradescope/make_autograder.sh [OUT.zip]   (default: autograder.zip)
# It holds setup.sh and run_autograder at its top level and the repository's committed files
# (git archive of HEAD) in ratelimit-lab/, so commit the course's changes first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(realpath -m "${1:-autograder.zip}")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/setup.sh" "$here/run_autograder" "$stage/"
mkdir "$stage/ratelimit-lab"
git -C "$repo" archive HEAD | tar -x -C "$stage/ratelimit-lab"
rm -f "$out"
(cd "$stage" && python3 -m zipfile -c "$out" setup.sh run_autograder ratelimit-lab)
echo "wrote $out: upload it as the assignment's autograder (Gradescope builds it with setup.sh)"

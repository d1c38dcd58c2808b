#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: the zip made by
# make_autograder.sh is unpacked in /autograder/source (this file, run_autograder, and the
# course's copy of ratelimit-lab in ratelimit-lab/).
#
# It installs Rust when the image has none, builds the grading command, and builds the
# course crate's dependencies once where run_autograder builds every submission, so that a
# submission compiles only its own crate.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")" && pwd)
repo=$source_dir/ratelimit-lab

if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  apt-get update
  apt-get install -y --no-install-recommends ca-certificates curl gcc libc6-dev
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
fi
export PATH=$HOME/.cargo/bin:$PATH

CARGO_TARGET_DIR=$repo/target \
  cargo build --release --locked -p ratelimit-lab-instructor --manifest-path "$repo/Cargo.toml"
CARGO_TARGET_DIR=$source_dir/target-learner \
  cargo test --no-run --locked --manifest-path "$repo/templates/learner/Cargo.toml"

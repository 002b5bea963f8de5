#!/usr/bin/env bash
# Runs tools/setup.sh --check: exits 0 iff every package it installs is present,
# and checks the script mentions each tool the build relies on.
set -euo pipefail
script="tools/setup.sh"
bash "$script" --check
for package in bazel-bootstrap librocksdb-dev libabsl-dev protobuf-compiler \
    libgoogle-perftools-dev libgtest-dev libbenchmark-dev libcivetweb-dev \
    prometheus clang libclang-rt-14-dev; do
  grep -q "^  $package " "$script" || { echo "setup.sh does not install $package"; exit 1; }
done
echo "setup.sh --check ok"

#!/usr/bin/env bash
# Set-up + build + the embedded default job in single-node test mode (no launcher needed).
# Prints the job's summary and where its output file is.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
scripts/setup-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
mkdir -p out
cd out
../build/release/src/app/tessera run "$@"

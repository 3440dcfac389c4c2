#!/usr/bin/env bash
# Install what is missing, build into build/ (RelWithDebInfo), run the whole test suite.
# Idempotent; works as root (CI) or through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
gmt_install_deps
gmt_install_npm tests/export
gmt_configure_and_build build
cd build
ctest --output-on-failure -j "$(nproc)" "$@"

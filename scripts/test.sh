#!/usr/bin/env bash
# Install what is missing, build into build/ (RelWithDebInfo), run the whole test suite.
# Idempotent; works as root (CI) or through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
gmt_install_deps "${GMT_TEST_PACKAGES[@]}" "${GMT_PACKAGE_TOOLS[@]}"
gmt_install_npm analyzer/views/html tests/browser tests/export tests/cli/sarif
# The HTML report and its browser tests are part of the suite: missing npm packages fail
# the configure step rather than leave those tests out.
gmt_configure_and_build build -DGPUMEMTRACE_HTML_REQUIRED=ON
cd build
ctest --output-on-failure -j "$(nproc)" "$@"

#!/usr/bin/env bash
# Installs what Waymark needs, builds with warnings as errors, checks formatting and runs every
# test. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
echo "== swift format lint --strict"
swift format lint --strict --recursive Package.swift Sources Tests
echo "== build (warnings are errors)"
swift build -j 2 --build-tests -Xswiftc -warnings-as-errors
echo "== tests"
swift test -j 2 --skip-build

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
swift build -j 2 --package-path Examples/LocationApp -Xswiftc -warnings-as-errors  # ExampleAppTests
# DebianPackageTests package and install these (static Swift runtime, as shipped).
for product in waymark waymarkd waymark-identify; do
  swift build -c release -j 2 --static-swift-stdlib --product "$product"
done
echo "== fault campaign, smoke (Scripts/faults.sh --smoke; the full campaign runs on demand)"
Scripts/faults.sh --smoke --build-dir .build/debug
echo "== tests"
# One test at a time: many tests block on real processes (gpsd, waymark, waymarkd), and on a
# 2-core machine those blocked threads starve the concurrency pool that the async tests and the
# gpsd harness need, which turns deadlines into flaky failures. Serial, the suite takes ~2 min.
swift test -j 2 --skip-build --no-parallel

#!/usr/bin/env bash
# Installs what Waymark needs, builds with warnings as errors, checks formatting and runs every
# test. This is the README's test command and what CI runs. It ends with the tests that were
# skipped and why, the counts of the conformance suites (the comparisons with gpsd's own output)
# and the line coverage of each module (Scripts/coverage.sh); its exit status is the tests'.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, printed at the end (the tail of a CI log says where the time went).
timings=()
stage_name="install (Scripts/install-deps.sh)"
stage_started=$SECONDS
stage() {
  timings+=("$(printf '%6d s  %s' $((SECONDS - stage_started)) "$stage_name")")
  stage_name="$1"
  stage_started=$SECONDS
  echo "== $1 (at +$SECONDS s)"
  echo "$1 (since +$SECONDS s)" > "$heartbeat"
}
# Every 10 minutes a line says the elapsed time and the stage, so that a log cut short says
# where the time went.
heartbeat="$(mktemp)"
(
  while sleep 600 >/dev/null 2>&1; do
    [ -f "$heartbeat" ] || exit 0
    echo "== +$((SECONDS)) s: $(cat "$heartbeat" 2>/dev/null)"
  done
) &
ticker=$!
trap 'rm -f "$heartbeat"; kill "$ticker" 2>/dev/null || true' EXIT
Scripts/install-deps.sh
stage "swift format lint --strict, Scripts/lint-patterns.py"
swift format lint --strict --recursive Package.swift Sources Tests
# Conversions that can trap in Sources, and tests that can pass without checking (guard-return,
# unbounded for-await, printed figures); the checker first proves it finds a planted example of
# each pattern (Scripts/lint-patterns.py, exceptions with reasons in Scripts/lint-patterns.allow).
python3 Scripts/lint-patterns.py --self-test
python3 Scripts/lint-patterns.py
stage "build (warnings are errors; instrumented for code coverage, built once)"
swift build -j 2 --build-tests --enable-code-coverage -Xswiftc -warnings-as-errors
stage "API reference (Scripts/docs.sh)"
Scripts/docs.sh  # the API reference (DocC, warnings are errors); every public symbol documented
stage "examples and the static release builds"
swift build -j 2 --package-path Examples/LocationApp -Xswiftc -warnings-as-errors  # ExampleAppTests
swift build -j 2 --package-path Examples/MonitorApp -Xswiftc -warnings-as-errors  # MonitorAppTests
swift build -j 2 --package-path Examples/LiveApp -Xswiftc -warnings-as-errors  # LiveAppTests
# DebianPackageTests package and install these (static Swift runtime, as shipped).
for product in waymark waymarkd waymark-identify; do
  swift build -c release -j 2 --static-swift-stdlib --product "$product"
done
stage "fault campaign, smoke (Scripts/faults.sh --smoke; the full campaign runs on demand)"
# (The debug binaries are instrumented: their profiles go nowhere, the tests' coverage is
# the test run's.)
# A failed or hung (20 min) smoke fails the run, after the tests have run too.
status=0
LLVM_PROFILE_FILE=/dev/null timeout --kill-after=30 1200 \
  Scripts/faults.sh --smoke --build-dir .build/debug || status=$?
((status == 0)) || echo "== the fault smoke failed (exit $status; 124: stopped after 20 min)"
stage "tests"
# One test at a time: many tests block on real processes (gpsd, waymark, waymarkd), and on a
# 2-core machine those blocked threads starve the concurrency pool that the async tests and the
# gpsd harness need, which turns deadlines into flaky failures. Serial, the suite takes about 11 min.
results="$(mktemp -d)"
trap 'rm -rf "$results" "$heartbeat"; kill "$ticker" 2>/dev/null || true' EXIT
smoke_status=$status
status=0
rm -f .build/debug/codecov/*.profraw  # the profiles of this run alone
# A watchdog: a test that hangs ends the run after 45 min (not CI's limit), naming the test;
# a minute before, it prints what runs and where each thread of the test process waits.
(
  sleep 2640 >/dev/null 2>&1 || exit 0
  echo "== the tests have run 44 min; the processes now:"
  ps -eo pid,ppid,etimes,stat,args --forest | cut -c1-220 || true
  for pid in $(pgrep -f 'swiftpm-testing-helper|PackageTests.xctest' || true); do
    echo "== the threads of $pid:"
    gdb -p "$pid" -batch -ex 'thread apply all bt 30' 2>/dev/null \
      | grep -E '^(Thread|#)' | cut -c1-220 | head -600 || true
  done
) &
dumper=$!
timeout --kill-after=30 2700 swift test -j 2 --skip-build --no-parallel --enable-code-coverage \
  --xunit-output "$results/tests.xml" 2>&1 | tee "$results/tests.log" || status=$?
kill "$dumper" 2>/dev/null || true
if ((status == 124 || status == 137)); then
  echo "== the tests were stopped after 45 min; started and not ended:"
  python3 - "$results/tests.log" <<'EOT'
import re, sys
running = {}
for line in open(sys.argv[1], errors="replace"):
    # A parameterized test's cases start one by one ("Test case passing …") but end together.
    if "Test case passing" in line:
        continue
    started = re.search(r"Test (.+?) started\.", line)
    ended = re.search(r"Test (.+?) (passed|failed|skipped)", line)
    if started:
        running[started.group(1)] = True
    elif ended:
        running.pop(ended.group(1), None)
print("\n".join(running) or "(none: the runner itself hung)")
EOT
fi

stage "skipped tests, conformance counts, line coverage"
echo "== skipped tests"
# Swift Testing's xUnit report names each skipped test with its suite and the reason it gave.
[ -f "$results/tests-swift-testing.xml" ] || echo "no xUnit report: the test run ended early"
[ ! -f "$results/tests-swift-testing.xml" ] || python3 - "$results/tests-swift-testing.xml" <<'EOT'
import sys
import xml.etree.ElementTree as tree
rows = []
try:
    report = tree.parse(sys.argv[1])
except tree.ParseError as error:
    sys.exit(print(f"the xUnit report is incomplete ({error}): the test run ended early") or 0)
for case in report.iter("testcase"):
    skipped = case.find("skipped")
    if skipped is not None:
        rows.append((case.get("classname", ""), case.get("name", ""), (skipped.text or "").strip()))
if not rows:
    print("none")
else:
    print(f"{len(rows)} skipped")
    for row in [("suite", "test", "reason")] + sorted(rows):
        print("| " + " | ".join(row) + " |")
EOT
echo "== conformance (comparisons with gpsd's own output)"
grep -E '^(conformance|manifest|framing reference|gpsd corpus): ' "$results/tests.log" \
  || echo "no conformance counts: the conformance suites did not run"
echo "== line coverage"
Scripts/coverage.sh || status=$((status ? status : 1))
((status != 0 || smoke_status == 0)) || status=$smoke_status
stage "end"
echo "== wall time of each stage"
printf '%s\n' "${timings[@]}"
exit "$status"

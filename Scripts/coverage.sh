#!/usr/bin/env bash
# Prints the line coverage of each module under Sources/ from the last coverage run (the tests
# built and run with --enable-code-coverage, as Scripts/test.sh does), one row per module:
# Sources/<Module>, lines, covered, %, then the total. The rows are a Markdown table.
#
#   Scripts/coverage.sh [--build-dir <dir>]      (default .build/debug)
#
# The counts come from llvm-cov (next to swift in the toolchain) on the merged profile
# (<dir>/codecov/default.profdata, written by `swift test --enable-code-coverage`) and the
# instrumented binaries: the test bundle, and the executables the tests run as processes
# (waymark, waymarkd, waymark-identify), whose runs write their profiles beside the test's, and
# waymark-bench (WaymarkBenchmarks, which no test runs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=".build/debug"
while (($#)); do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    *) echo "Error: unknown argument '$1'" >&2; echo "Usage: Scripts/coverage.sh [--build-dir <dir>]" >&2; exit 64 ;;
  esac
done
toolchain="$(dirname "$(readlink -f "$(command -v swift)")")"
profdata="$build/codecov/default.profdata"
[ -f "$profdata" ] || { echo "Error: no $profdata (run the tests with --enable-code-coverage)" >&2; exit 66; }
objects=()
for bundle in "$build"/*PackageTests.xctest; do
  [ -f "$bundle" ] && objects+=("$bundle")
done
((${#objects[@]})) || { echo "Error: no test bundle in $build" >&2; exit 66; }
for executable in waymark waymarkd waymark-identify waymark-bench; do
  [ -x "$build/$executable" ] && objects+=(-object "$build/$executable")
done
"$toolchain/llvm-cov" export -summary-only -instr-profile "$profdata" "${objects[@]}" \
  | python3 -c '
import json, os, sys
root = os.path.realpath(sys.argv[1]) + "/Sources/"
modules = {}
for export in json.load(sys.stdin)["data"]:
    for entry in export["files"]:
        # A source linked into a second target (waymark-identify compiles the WaymarkIdentify
        # files again, for Embedded Swift) counts once, under the module that holds the file.
        if os.path.islink(entry["filename"]):
            continue
        path = os.path.realpath(entry["filename"])
        if not path.startswith(root):
            continue
        module = path[len(root):].split("/")[0]
        lines = entry["summary"]["lines"]
        total = modules.setdefault(module, [0, 0])
        total[0] += lines["count"]
        total[1] += lines["covered"]
def row(name, count, covered):
    percent = 100.0 * covered / count if count else 100.0
    print(f"| {name:<34} | {count:>6} | {covered:>7} | {percent:>5.1f} |")
print("| %-34s | %6s | %7s | %5s |" % ("module", "lines", "covered", "%"))
print("|%s|%s:|%s:|%s:|" % ("-" * 36, "-" * 7, "-" * 8, "-" * 6))
for name in sorted(modules):
    row("Sources/" + name, *modules[name])
row("total", sum(m[0] for m in modules.values()), sum(m[1] for m in modules.values()))
' "$PWD"

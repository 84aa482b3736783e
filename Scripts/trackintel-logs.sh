#!/bin/sh
# Waymark's stays against trackintel's staypoints (100 m, 5 min, gap 15 min) on logs as
# people have them: the real trajectories of Tests/Fixtures/tracks (handheld GPS tracks from
# gpxpy's test files, Apache-2.0, and a smartphone's log with its owner's stop diary from the
# STAGA dataset's example, BSD-3-Clause; converted to NMEA: no speed, no error estimate) and the
# duty-cycled days `waymark-bench stays --drives --duty-cycled` writes (a phone's logger that
# sleeps at rest, wakes with a jump on movement, samples every 1 or 30 s, reports no speed and
# HDOP 1.0 while its positions wander), and the same days from a logger that sleeps only after
# 5-15 min at rest (`--sleep-after 300,900`: stays observed for 5 min or more before the gap,
# the issue's target measure). `waymark replay --fixes` decodes each log for
# trackintel, `waymark replay --visits` finds Waymark's stays, Scripts/trackintel-logs.py
# scores and counts.
#
# trackintel is a benchmark reference only, never a dependency of Waymark: it is installed
# with pip in a virtual environment of its own (default .build/trackintel-venv).
#
# Usage: Scripts/trackintel-logs.sh [days]   (after swift build -c release; WAYMARK_BIN=
# .build/debug uses a debug build's binaries: the same results, slower).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
days=${1:-20}
bin=${WAYMARK_BIN:-$root/.build/release}
venv=${TRACKINTEL_VENV:-$root/.build/trackintel-venv}
work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-trackintel-logs.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'trackintel==1.4.2'
fi
mkdir -p "$work/real" "$work/duty" "$work/late"
cp "$root"/Tests/Fixtures/tracks/*.nmea "$root"/Tests/Fixtures/tracks/*.diary.csv "$work/real/"
"$bin/waymark-bench" stays --drives "$work/duty" --days "$days" --duty-cycled >&2
"$bin/waymark-bench" stays --drives "$work/late" --days "$days" --duty-cycled \
  --sleep-after 300,900 >&2
for log in "$work"/real/*.nmea "$work"/duty/*.nmea "$work"/late/*.nmea; do
  base=${log%.nmea}
  "$bin/waymark" replay "$log" --fixes > "$base.fixes.ndjson" 2>/dev/null
  "$bin/waymark" replay "$log" --visits > "$base.visits.ndjson" 2>/dev/null
done
"$venv/bin/python" "$root/Scripts/trackintel-logs.py" "$work/real" \
  "Real trajectories (Tests/Fixtures/tracks)"
echo
"$venv/bin/python" "$root/Scripts/trackintel-logs.py" "$work/duty" \
  "Duty-cycled synthetic days ($days)"
echo
"$venv/bin/python" "$root/Scripts/trackintel-logs.py" "$work/late" \
  "Duty-cycled synthetic days, asleep after 5-15 min at rest ($days)"

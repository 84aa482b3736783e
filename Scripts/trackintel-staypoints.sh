#!/bin/sh
# Waymark's stays against trackintel's staypoints (the academic reference) on the same held-out
# drives: `waymark-bench stays --drives` writes them (NMEA logs, their decoded fixes as CSV, the
# true stops), `waymark replay --visits` finds Waymark's stays, trackintel's
# generate_staypoints (sliding method) finds its staypoints from the same fixes, and
# Scripts/trackintel-staypoints.py scores both against the truth.
#
# trackintel is a benchmark reference only, never a dependency of Waymark: it is installed
# with pip in a virtual environment of its own (default .build/trackintel-venv).
#
# Usage: Scripts/trackintel-staypoints.sh [days] [--exact-speed]   (after swift build -c release;
# WAYMARK_BIN=.build/debug uses a debug build's binaries: the same results, slower).
# --exact-speed: stops with the synthesizer's speed of exactly 0 instead of a receiver's noise
# at rest.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
days=${1:-20}
exact=${2:-}
bin=${WAYMARK_BIN:-$root/.build/release}
venv=${TRACKINTEL_VENV:-$root/.build/trackintel-venv}
work=$(mktemp -d "${TMPDIR:-/tmp}/waymark-trackintel.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'trackintel==1.4.2'
fi
"$bin/waymark-bench" stays --drives "$work" --days "$days" $exact >&2
i=1
while [ "$i" -le "$days" ]; do
  "$bin/waymark" replay "$work/day-$i.nmea" --visits \
    > "$work/day-$i.waymark.ndjson" 2>/dev/null
  i=$((i + 1))
done
"$venv/bin/python" "$root/Scripts/trackintel-staypoints.py" "$work" "$days"

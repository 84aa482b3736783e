#!/usr/bin/env bash
# Installs what Waymark needs, builds it, and replays the bundled demo drive with the bundled
# places: arrivals, departures and visits, as a person would see them.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build -c release -j 2 --product waymark
waymark=.build/release/waymark
echo "== waymark replay Demo/drive.nmea (summary)"
"$waymark" replay Demo/drive.nmea
echo
echo "== first and last fixes (gpsd-style TPV)"
"$waymark" replay Demo/drive.nmea --fixes 2>/dev/null | sed -n '1p;$p'

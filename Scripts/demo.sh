#!/usr/bin/env bash
# Installs what Waymark needs, builds it, and replays the bundled demo drive with the bundled
# places: arrivals, departures and visits, as a person would see them, and draws the drive's
# map into the directory it was started from (waymark-demo-map.html; WAYMARK_DEMO_MAP sets
# another path).
set -euo pipefail
map=${WAYMARK_DEMO_MAP:-waymark-demo-map.html}
[[ $map == /* ]] || map=$PWD/$map
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift build -c release -j 2 --static-swift-stdlib --product waymark
waymark=.build/release/waymark
store=$(mktemp -d)/demo.db
trap 'rm -rf "$(dirname "$store")"' EXIT
echo "== waymark replay Demo/drive.nmea --places Demo/places.geojson --store $store"
"$waymark" replay Demo/drive.nmea --places Demo/places.geojson --store "$store"
echo
echo "== waymark visits --store $store --format text"
"$waymark" visits --store "$store" --format text
echo
echo "== waymark map --store $store --output $map"
"$waymark" map --store "$store" --output "$map"

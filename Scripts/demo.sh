#!/usr/bin/env bash
# Installs what Waymark needs, builds it, and replays the bundled demo drive with the bundled
# places: arrivals, departures and visits, as a person would see them.
set -euo pipefail
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

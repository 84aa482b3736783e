#!/usr/bin/env bash
# Draws docs/guide/map-history.png: a year of synthetic drives through Lyon (waymark
# synthesize), turned into a GPX file by gpsbabel as a phone app would export it, imported with
# the demo's places into a store (waymark import), drawn as the interactive map (waymark map,
# Leaflet from Debian's libjs-leaflet) and photographed by headless Chromium without network (so
# without tiles), one visit's popup open.
# Usage: Scripts/map-screenshot.sh [<output.png>]   (WAYMARK: the waymark to run; DAYS: how
# many days of history, default 365)
set -euo pipefail
cd "$(dirname "$0")/.."
waymark=${WAYMARK:-.build/debug/waymark}
output=${1:-docs/guide/map-history.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "start 2026-10-01T07:30:00.000Z 45.76040 4.83590"
  echo "seed 38"
  echo "noise 3"
  echo "accuracy 6"
  for day in $(seq 0 $((${DAYS:-365} - 1))); do
    case $((day % 3)) in
      0) printf 'drive 45.76210 4.83480 9\ndrive 45.76330 4.83370 9\nstop 240\n' ;; # bakery
      1) printf 'drive 45.76150 4.83900 10\ndrive 45.76450 4.83950 10\n' ;;          # east
      *) printf 'drive 45.76400 4.83200 9\n' ;;                                       # west
    esac
    printf 'drive 45.76700 4.83700 11\ndrive 45.76810 4.83590 9\nstop 600\n' # office
    printf 'gap 28000\n'                                                     # indoors
    printf 'drive 45.76700 4.83330 8\ndrive 45.76610 4.83150 8\nstop 400\n'  # café
    printf 'drive 45.76300 4.83300 10\ndrive 45.76040 4.83590 10\nstop 300\n' # home
    printf 'gap 56790\n'
  done
} >"$work/month.route"
"$waymark" synthesize "$work/month.route" --output "$work/month.nmea"
gpsbabel -i nmea -f "$work/month.nmea" -o gpx,gpxver=1.0 -F "$work/month.gpx"
"$waymark" import "$work/month.gpx" --places Demo/places.geojson --store "$work/month.db" \
  >/dev/null
"$waymark" map --store "$work/month.db" --output "$work/month.html"
# The office visit of the 10th day: its popup open, as a click opens it.
visit=$("$waymark" visits --store "$work/month.db" --format csv | awk -F, 'NR > 1 && /office/ { n++ } NR > 1 { v++ } n == 10 { print v; exit }')
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
  --user-data-dir="$work/profile" --host-resolver-rules="MAP * ~NOTFOUND" \
  --proxy-server=http://127.0.0.1:9 --virtual-time-budget=5000 --window-size=960,640 \
  --screenshot="$output" "file://$work/month.html#visit=$visit" 2>/dev/null
echo "$output: $(stat -c %s "$output") bytes (visit $visit open)"

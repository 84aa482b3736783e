#!/usr/bin/env bash
# Builds one of the file parsers with libFuzzer + AddressSanitizer and runs its harness:
#   config  waymarkd's configuration (Fuzz/ConfigFuzz.swift: ranges of accepted values, the
#           error's line within the file, a leading comment or CRLF line ends change nothing)
#   places  the GeoJSON places file (Fuzz/PlacesFuzz.swift: ranges, unique ids, an export reads
#           back as the same places and exports again byte for byte)
#   grants  grants.json (Fuzz/GrantsFuzz.swift: the file is named in errors, what is written
#           reads back as the same grants and writes again byte for byte)
#   monitor a monitor's saved state and a place's state (Fuzz/MonitorStateFuzz.swift: a refusal
#           says what was expected, what is written reads back the same and writes again byte
#           for byte)
#   waypoints an MQTT setWaypoints command (Fuzz/WaypointsFuzz.swift: the places accepted are
#           within the limits, at most 1,000, unique; the waypoints message and a location
#           message from any fix numbers are built without a trap; Fix.Limits hold)
# Every harness also checks that a parse is deterministic and never crashes.
#
#   Fuzz/run-parsers.sh <config|places|grants|monitor> [runs]   # default 1000000 inputs
#   FUZZ_CORPUS=dir Fuzz/run-parsers.sh places           # corpus logs as seeds too (default
#                                                        # Tests/Fixtures/gpsd)
#
# Seeds: the repository's file of that kind (config/waymark.conf, also with every key
# uncommented; Demo/places.geojson), the test suite's inline samples (Fuzz/fixture-seeds.py),
# a slice of the demo log and of the corpus logs (text of another kind). The modules are built
# once, into Fuzz/out-modules, which the other harnesses share (Fuzz/modules.sh).
# Exit status is libFuzzer's: 0 when no crash or failed check was found.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: Fuzz/run-parsers.sh <config|places|grants|monitor|waypoints|import> [runs]}
runs=${2:-1000000}
case "$target" in
  config) harness=Fuzz/ConfigFuzz.swift ;;
  places) harness=Fuzz/PlacesFuzz.swift ;;
  grants) harness=Fuzz/GrantsFuzz.swift ;;
  monitor) harness=Fuzz/MonitorStateFuzz.swift ;;
  waypoints) harness=Fuzz/WaypointsFuzz.swift ;;
  import) harness=Fuzz/ImportFuzz.swift ;;
  *)
    echo "Error: the target is config, places, grants, monitor, waypoints or import, not '$target'" >&2
    exit 64
    ;;
esac
out=${FUZZ_OUT:-Fuzz/out-parsers}
mkdir -p "$out"
flags=("${FUZZ_OPTIMIZE:--O}" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name waymark)
source Fuzz/modules.sh
module WaymarkCore Sources/WaymarkCore/*.swift
libraries=(-lWaymarkCore)
sources=()
if [ "$target" = config ] || [ "$target" = waypoints ]; then
  # config: the parser (WaymarkDaemonConfiguration) and what it names: Waymark (with the
  # client, gpsd through CGPS and NMEA), the MQTT settings, the agents' rules
  # (WaymarkIdentify), the pipeline's track settings, the store (SQLite through CSQLite) and the
  # process layer (StorePath's resolver and opener, exit codes, the option table), the Traccar
  # settings.
  # waypoints: OwnTracks (WaymarkMQTT without libmosquitto) and what it names, a part of the
  # same chain: one set of libraries serves both.
  build_waymark_modules
  module WaymarkStore Sources/WaymarkStore/*.swift
  module WaymarkProcess Sources/WaymarkProcess/*.swift
  module WaymarkMQTT Sources/WaymarkMQTT/OwnTracks.swift Sources/WaymarkMQTT/MQTTSettings.swift \
    Sources/WaymarkMQTT/MQTTIdentity.swift Sources/WaymarkMQTT/SHA256.swift \
    Sources/WaymarkMQTT/HomeAssistant.swift
  # The Traccar settings and queries (not the sender, which loads libcurl).
  module WaymarkTraccar Sources/WaymarkTraccar/TraccarSettings.swift \
    Sources/WaymarkTraccar/OsmAnd.swift
  module WaymarkIdentify Sources/WaymarkIdentify/*.swift
  module WaymarkPipeline Sources/WaymarkPipeline/TrackRecordingSettings.swift
  module WaymarkDaemonConfiguration Sources/WaymarkDaemonConfiguration/*.swift
  libraries=(-lWaymarkDaemonConfiguration -lWaymarkPipeline -lWaymarkIdentify
    -lWaymarkTraccar -lWaymarkMQTT -lWaymarkProcess -lWaymarkStore -lWaymark -lGPSD -lWaymarkClient -lNMEA
    -lWaymarkCore -lgps -lsqlite3)
elif [ "$target" = monitor ]; then
  # The state's types live in Waymark (with the client, gpsd through CGPS and NMEA).
  build_waymark_modules
  libraries=(-lWaymark -lGPSD -lWaymarkClient -lNMEA -lWaymarkCore -lgps)
elif [ "$target" = import ]; then
  # The readers of `waymark import` are internal to waymark's command line: the harness is
  # compiled with their files (not the importer that runs the pipeline) and the output sink
  # they report to, over NMEA (GPX's HDOP rule) and WaymarkCore.
  module NMEA Sources/NMEA/*.swift
  libraries=(-lNMEA -lWaymarkCore)
  for file in Sources/WaymarkCLI/Import/*.swift; do
    [ "$(basename "$file")" = FileImporter.swift ] || sources+=("$file")
  done
  sources+=(Sources/WaymarkProcess/OutputSink.swift)
fi
swiftc "${harness_flags[@]}" "${libraries[@]}" "$harness" ${sources[@]+"${sources[@]}"} \
  -o "$out/$target-fuzz"
seeds="$out/$target-seeds" work="$out/$target-work"
rm -rf "$seeds" "$work" && mkdir -p "$seeds" "$work"
case "$target" in
  config)
    cp config/waymark.conf "$seeds/waymark.conf"
    # Every key of the shipped file set (its first example of each; no file-reading keys).
    sed -n 's/^#\([a-z][a-z-]* = .*\)/\1/p' config/waymark.conf \
      | grep -v '^mqtt-\(password-file\|cafile\)' | awk -F' = ' '!seen[$1]++' > "$seeds/every-key.conf"
    printf 'gpsd = [::1]:2947:/dev/ttyACM0\nsocket = none\ntrack = off\nmqtt = broker:8883\nmqtt-qos = 2\n' \
      > "$seeds/mixed.conf"
    ;;
  places)
    cp Demo/places.geojson "$seeds/demo.geojson"
    ;;
  grants)
    printf '%s\n' '{"grants":[{"accuracy":"full","client":"org.example.app","grantedAt":"2026-11-29T12:00:07.000Z","level":"whenInUse"},{"accuracy":"reduced","client":"alice:/usr/bin/gnome-maps","grantedAt":"2026-11-29T12:00:07.123Z","level":"always"}],"version":1}' \
      > "$seeds/two.json"
    printf '%s\n' '{"version":1,"grants":[]}' > "$seeds/empty.json"
    ;;
  waypoints)
    printf '%s\n' '{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"Home","lat":52.5,"lon":13.4,"rad":60,"tst":1700000000},{"_type":"waypoint","desc":"Work","lat":-33.9,"lon":151.2,"rad":100,"rid":"work"}]}}' \
      > "$seeds/two.json"
    printf '%s\n' '{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"Huge","lat":1,"lon":2,"rad":1e19}]}' \
      > "$seeds/huge.json"
    ;;
  monitor)
    # States JSONEncoder wrote, and one place's states.
    cp Tests/Fixtures/saved-state/monitor.json Tests/Fixtures/saved-state/held-monitor.json "$seeds/"
    cut -f 2 Tests/Fixtures/saved-state/saved-monitor-state.tsv | split -l 1 - "$seeds/place-"
    ;;
  import)
    # The Takeout samples (cut to the fuzzer's input length), a GPX and a CSV.
    for sample in Tests/Fixtures/import/*.json Tests/Fixtures/import/*.geojson; do
      head -c 3000 "$sample" > "$seeds/$(basename "$sample")"
    done
    printf '%s\n' '<gpx><trk><trkseg><trkpt lat="48.1" lon="11.5"><ele>5</ele><time>2024-03-05T08:00:00Z</time><hdop>1.2</hdop></trkpt></trkseg></trk></gpx>' \
      > "$seeds/t.gpx"
    printf 'time;lat;lon;"ele"\n2024-03-05T08:00:00+01:00;48.1;11.5;500\n1709625601,48.2\n' > "$seeds/t.csv"
    ;;
esac
python3 Fuzz/fixture-seeds.py "$target" "$seeds" > /dev/null
head -n 10 Demo/drive.nmea > "$seeds/demo-log"
corpus=${FUZZ_CORPUS:-Tests/Fixtures/gpsd}
if [ -d "$corpus" ]; then
  for log in $(ls "$corpus"/*.log | head -n 5); do head -n 10 "$log" > "$seeds/corpus-$(basename "$log")"; done
fi
echo "$target: $(ls "$seeds" | wc -l) seeds"
"$out/$target-fuzz" -runs="$runs" -max_len=8192 -print_final_stats=1 -artifact_prefix="$out/$target-" \
  "$work" "$seeds"

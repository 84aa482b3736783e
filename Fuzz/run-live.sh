#!/usr/bin/env bash
# Fuzzes the real daemon end to end with the release binaries (no sanitizer build: the inputs
# reach it the way an attacker's would):
#   session  waymarkd's whole gpsd session (Fuzz/gpsd-session.py: a gpsd impostor's mutated JSON
#            through the real libgps into the daemon, which publishes to a real mosquitto)
#   mqtt     MQTT commands (Fuzz/mqtt-commands.py: mutated setWaypoints and other payloads
#            through a real mosquitto to the daemon's <topic>/cmd)
#   replay   `waymark replay --mqtt` (Fuzz/nmea-mqtt.py: NMEA sentences with hostile fields and
#            valid checksums, every fix published to a real mosquitto)
#
#   Fuzz/run-live.sh <session|mqtt|replay> [cases]   # default 1000000; WAYMARK_BUILD_DIR
#                                                    # (default .build/release) holds the binaries
#
# Prints "Done <n> runs" and exits 0 when the daemon survived every case, exited 0 on SIGTERM,
# left an intact store (with every place within the limits) and wrote nothing outside its
# state directory; for replay, when every replay ended by itself (0, 65 or 69 with a reason)
# and left an intact store.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: Fuzz/run-live.sh <session|mqtt|replay> [cases]}
cases=${2:-1000000}
case "$target" in
  session) script=Fuzz/gpsd-session.py ;;
  mqtt) script=Fuzz/mqtt-commands.py ;;
  replay) script=Fuzz/nmea-mqtt.py ;;
  *) echo "Error: the target is session, mqtt or replay, not '$target'" >&2; exit 64 ;;
esac
build=${WAYMARK_BUILD_DIR:-.build/release}
for binary in waymark waymarkd; do
  [ -x "$build/$binary" ] || { echo "Error: $build/$binary missing (swift build -c release)" >&2; exit 66; }
done
if [ "$target" != session ] && [ ! -x /usr/sbin/mosquitto ]; then
  echo "Error: /usr/sbin/mosquitto missing (apt-get install mosquitto)" >&2
  exit 69
fi
daemon=(--waymarkd "$build/waymarkd")
[ "$target" = replay ] && daemon=()
exec python3 "$script" "${daemon[@]}" --waymark "$build/waymark" --cases "$cases" \
  --seed "${FUZZ_SEED:-1}"

#!/usr/bin/env bash
# Fuzzes waymarkd's MQTT commands end to end (Fuzz/mqtt-commands.py: mutated setWaypoints and
# other payloads through a real mosquitto to the real daemon) with the release binaries:
#
#   Fuzz/run-mqtt.sh [cases]           # default 1000000; WAYMARK_BUILD_DIR (default
#                                      # .build/release) holds waymark and waymarkd
#
# Prints "Done <n> runs" and exits 0 when the daemon took every case and survived, exited 0 on
# SIGTERM, left an intact store with every place within the limits, and wrote nothing outside
# its state directory.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-1000000}
build=${WAYMARK_BUILD_DIR:-.build/release}
for binary in waymark waymarkd; do
  [ -x "$build/$binary" ] || { echo "Error: $build/$binary missing (swift build -c release)" >&2; exit 66; }
done
[ -x /usr/sbin/mosquitto ] || { echo "Error: /usr/sbin/mosquitto missing (apt-get install mosquitto)" >&2; exit 69; }
exec python3 Fuzz/mqtt-commands.py --waymarkd "$build/waymarkd" --waymark "$build/waymark" \
  --cases "$cases" --seed "${FUZZ_SEED:-1}"

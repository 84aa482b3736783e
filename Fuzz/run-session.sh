#!/usr/bin/env bash
# Fuzzes waymarkd's whole gpsd session (Fuzz/gpsd-session.py: a gpsd impostor, the real libgps,
# the real daemon and, when installed, a real mosquitto) with the release binaries:
#
#   Fuzz/run-session.sh [cases]        # default 1000000; WAYMARK_BUILD_DIR (default
#                                      # .build/release) holds waymark and waymarkd
#
# Prints "Done <n> runs" and exits 0 when the daemon survived every case, exited 0 on SIGTERM,
# left an intact store and wrote nothing outside its state directory.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-1000000}
build=${WAYMARK_BUILD_DIR:-.build/release}
for binary in waymark waymarkd; do
  [ -x "$build/$binary" ] || { echo "Error: $build/$binary missing (swift build -c release)" >&2; exit 66; }
done
exec python3 Fuzz/gpsd-session.py --waymarkd "$build/waymarkd" --waymark "$build/waymark" \
  --cases "$cases" --seed "${FUZZ_SEED:-1}"

#!/usr/bin/env bash
# Builds the NMEA decoder with libFuzzer + AddressSanitizer and runs it.
#
#   Fuzz/run.sh [runs]          # default 1000000 inputs; seeds from Demo/ and Tests fixtures
#   FUZZ_CORPUS=dir Fuzz/run.sh # also seed from another folder (e.g. ../shared/corpus/gpsd)
#
# Exit status is libFuzzer's: 0 when no crash was found.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
out=Fuzz/out
rm -rf "$out" && mkdir -p "$out/seeds" "$out/work"
flags=(-O -sanitize=fuzzer,address -parse-as-library -swift-version 6)
swiftc "${flags[@]}" -emit-library -static -module-name WaymarkCore -emit-module \
  -emit-module-path "$out/WaymarkCore.swiftmodule" -o "$out/libWaymarkCore.a" Sources/WaymarkCore/*.swift
swiftc "${flags[@]}" -emit-library -static -module-name NMEA -emit-module -I "$out" \
  -emit-module-path "$out/NMEA.swiftmodule" -o "$out/libNMEA.a" Sources/NMEA/*.swift
swiftc "${flags[@]}" -I "$out" -L "$out" -lNMEA -lWaymarkCore Fuzz/NMEAFuzz.swift -o "$out/nmea-fuzz"
# Seeds: slices of the demo log, and the corpus logs when given.
split -l 40 Demo/drive.nmea "$out/seeds/demo-"
ls "$out/seeds" | tail -n +20 | sed "s|^|$out/seeds/|" | xargs rm -f
if [ -n "${FUZZ_CORPUS:-}" ] && [ -d "$FUZZ_CORPUS" ]; then cp "$FUZZ_CORPUS"/*.log "$out/seeds/"; fi
"$out/nmea-fuzz" -runs="$runs" -max_len=1024 -print_final_stats=1 "$out/work" "$out/seeds"

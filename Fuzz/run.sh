#!/usr/bin/env bash
# Builds the NMEA framer, decoder and fix assembler with libFuzzer + AddressSanitizer and runs
# the checks of Fuzz/NMEAFuzz.swift (chunking changes nothing, fixes keep their invariants,
# parseLine agrees with the decoder).
#
#   Fuzz/run.sh [runs]          # default 1000000 inputs; seeds from Demo/ and the corpus
#   FUZZ_CORPUS=dir Fuzz/run.sh # seed from another folder of logs (default Tests/Fixtures/gpsd)
#
# Exit status is libFuzzer's: 0 when no crash was found.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
out=Fuzz/out
rm -rf "$out" && mkdir -p "$out/seeds" "$out/work"
flags=("${FUZZ_OPTIMIZE:--O}" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name waymark)
source Fuzz/modules.sh
module WaymarkCore Sources/WaymarkCore/*.swift
module NMEA Sources/NMEA/*.swift
swiftc "${harness_flags[@]}" -lNMEA -lWaymarkCore Fuzz/NMEAFuzz.swift -o "$out/nmea-fuzz"
# Seeds: slices of the demo log, and the corpus logs when given.
split -l 40 Demo/drive.nmea "$out/seeds/demo-"
ls "$out/seeds" | tail -n +20 | sed "s|^|$out/seeds/|" | xargs rm -f
# The corpus logs (gpsd's regression logs, Tests/Fixtures/gpsd by default) as 20-line slices of
# their first 100 lines: a seed longer than -max_len would be cut.
corpus=${FUZZ_CORPUS:-Tests/Fixtures/gpsd}
if [ -d "$corpus" ]; then
  for log in "$corpus"/*.log; do
    head -n 100 "$log" | split -l 20 - "$out/seeds/$(basename "$log" .log)-"
  done
fi
"$out/nmea-fuzz" -runs="$runs" -max_len=1024 -print_final_stats=1 -artifact_prefix="$out/" \
  "$out/work" "$out/seeds"

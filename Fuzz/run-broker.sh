#!/usr/bin/env bash
# Builds the request decoder (DaemonRequest.decode) of waymarkd's socket with libFuzzer + AddressSanitizer and runs it;
# with `messages`, the client's decoder of the daemon's lines (DaemonMessage) instead.
#
#   Fuzz/run-broker.sh [runs]            # default 1000000 inputs; seeded with every request class
#   Fuzz/run-broker.sh [runs] messages   # seeded with every daemon line of docs/protocol.md
#
# Exit status is libFuzzer's: 0 when no crash or failed check was found.
set -euo pipefail
cd "$(dirname "$0")/.."
# The target may come first (as Scripts/faults.sh passes it) or second.
if [ "${1:-}" = messages ] || [ "${1:-}" = requests ]; then
  target=$1
  runs=${2:-1000000}
else
  runs=${1:-1000000}
  target=${2:-requests}
fi
out=Fuzz/out-broker
rm -rf "$out" && mkdir -p "$out/seeds" "$out/work"
flags=("${FUZZ_OPTIMIZE:--O}" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name waymark)
source Fuzz/modules.sh
build_broker_modules
if [ "$target" = messages ]; then
  swiftc "${harness_flags[@]}" "${broker_libraries[@]}" Fuzz/DaemonMessageFuzz.swift \
    -o "$out/messages-fuzz"
  # Seeds: the daemon's lines of the protocol's transcripts, and a few broken ones.
  n=0
  while IFS= read -r line; do
    printf '%s' "$line" > "$out/seeds/seed-$n"
    n=$((n + 1))
  done < <(sed -n 's/^< \({.*\)$/\1/p' docs/protocol.md
    printf '%s\n' '{"class":"TPV","mode":1e300,"lat":1,"lon":2}' '{"class":"GEOFENCE"}' '[1,{"class":"ERROR"}]')
  exec "$out/messages-fuzz" -runs="$runs" -max_len=5000 -print_final_stats=1 \
    -artifact_prefix="$out/" "$out/work" "$out/seeds"
fi
swiftc "${harness_flags[@]}" "${broker_libraries[@]}" Fuzz/BrokerRequestFuzz.swift \
  -o "$out/broker-fuzz"
# Seeds: one line of each request class, valid and not.
n=0
while IFS= read -r line; do
  printf '%s' "$line" > "$out/seeds/seed-$n"
  n=$((n + 1))
done <<'SEEDS'
{"class":"WATCH","enable":true,"accuracy":"reduced","distance":25,"events":true}
{"class":"WATCH","enable":false}
{"class":"POLL"}
{"class":"REQUEST","level":"always"}
{"class":"AGENT","enable":true}
{"class":"ANSWER","id":7,"grant":"whenInUse","accuracy":"reduced"}
{"class":"ANSWER","id":1e300,"grant":"once"}
{"class":"WATCH","distance":-0.0,"accuracy":"\u0000"}
[{"class":"POLL"},{"a":[1,2,{"b":null}]}]
"\ud83d\ude00"
SEEDS
"$out/broker-fuzz" -runs="$runs" -max_len=5000 -print_final_stats=1 -artifact_prefix="$out/" \
  "$out/work" "$out/seeds"

#!/usr/bin/env bash
# Builds the broker (BrokerLoop and what it stands on) with libFuzzer + AddressSanitizer and
# runs Fuzz/BrokerInvariantFuzz.swift: many principals on real socket pairs against the real
# broker loop, every line they receive checked against the trust invariant.
#
#   Fuzz/run-invariant.sh [runs]   # default 200000 inputs
#
# Exit status is libFuzzer's: 0 when no crash or failed check was found.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200000}
out=Fuzz/out-invariant
rm -rf "$out" && mkdir -p "$out/seeds" "$out/work"
flags=("${FUZZ_OPTIMIZE:--O}" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name waymark)
# The harness drives BrokerLoop, which is internal (Fuzz/modules.sh builds the broker with
# -enable-testing).
source Fuzz/modules.sh
build_broker_modules
swiftc "${harness_flags[@]}" "${broker_libraries[@]}" Fuzz/BrokerInvariantFuzz.swift Fuzz/FuzzAnswers.swift \
  -o "$out/invariant-fuzz"
# Seeds, as steps of (op, principal, arguments…) (the op numbers are the harness's `switch`):
# an ungranted app that watches and polls while fixes go out, and root's STATUS; root's agent
# answering alice's app `always` before a fix, an arrival and a visit; a plain agent answering
# once and the authority saying yes; an operator's reduced grant, fixes ten minutes apart and a
# revocation; an operator's grant for the NMEA peer; an operator's `always` and every place
# message.
seed() { printf "$2" > "$out/seeds/$1"; }
seed ungranted '\x00\x00\x02\x00\x07\x0b\x00\x05\x06\x07\x04\x00\x05\x00\x00\x07\x05\x07'
seed root-agent '\x00\x00\x00\x04\x08\x04\x00\x06\x00\x00\x02\x00\x06\x09\x04\x01\x00\x02\x00\x0b\x00\x05\x10\x20\x0c\x00\x00\x0d\x00'
seed consulted '\x00\x00\x00\x01\x08\x01\x00\x06\x00\x01\x02\x00\x00\x09\x01\x01\x00\x00\x00\x0b\x00\x05\x01\x02\x04\x00'
seed reduced '\x0e\x00\x00\x01\x00\x00\x02\x00\x00\x0b\x00\xc8\x01\x01\x0b\x00\xc8\x02\x02\x04\x00\x0f\x00\x01\x0b\x00\x05\x05\x05'
seed nmea '\x0e\x06\x00\x00\x00\x06\x0b\x00\x05\x01\x01\x0b\x00\x05\x02\x02'
seed whereabouts '\x00\x00\x0e\x00\x01\x00\x02\x00\x06\x0c\x00\x00\x0c\x00\x01\x0d\x00\x0b\x00\x05\x10\x20'
SWIFT_BACKTRACE=enable=no "$out/invariant-fuzz" -runs="$runs" -max_len=512 -print_final_stats=1 \
  -artifact_prefix="$out/" "$out/work" "$out/seeds"

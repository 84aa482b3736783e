#!/usr/bin/env bash
# Builds the broker's agent rules (AgentQuestions, BrokerSession) with libFuzzer +
# AddressSanitizer and runs Fuzz/AgentQuestionsFuzz.swift over sequences of messages.
#
#   Fuzz/run-agents.sh [runs]   # default 200000 inputs
#
# Exit status is libFuzzer's: 0 when no crash or failed check was found.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200000}
out=Fuzz/out-agents
rm -rf "$out" && mkdir -p "$out/seeds" "$out/work"
flags=("${FUZZ_OPTIMIZE:--O}" -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name waymark)
# The harness drives BrokerSession, which is internal (Fuzz/modules.sh builds the broker with
# -enable-testing).
source Fuzz/modules.sh
build_broker_modules
swiftc "${harness_flags[@]}" "${broker_libraries[@]}" Fuzz/AgentQuestionsFuzz.swift Fuzz/FuzzAnswers.swift \
  -o "$out/agents-fuzz"
# Seeds: a self-grant (AGENT, REQUEST, ANSWER always from the asker), a same-process answer,
# root's answer, a consulted answer with a yes, reduced watchers and fixes.
printf '\x00\x00\x02\x00\x00\x03\x00\x00\x02\x08\x00\x00' > "$out/seeds/self-grant"
printf '\x00\x01\x02\x00\x01\x03\x01\x00\x02\x04\x01\x00\x00\x08\x00\x05\x06' > "$out/seeds/consult"
printf '\x00\x04\x02\x02\x00\x03\x04\x00\x01\x07\x02\x01\x08\x00\x10\x20\x08\x00\x70\x01' > "$out/seeds/root"
printf '\x07\x00\x03\x08\x00\x77\x01\x02\x08\x00\x77\x03\x04\x06\x05\x07\x05\x01\x08\x00\x77\x05' > "$out/seeds/reduced"
SWIFT_BACKTRACE=enable=no "$out/agents-fuzz" -runs="$runs" -max_len=512 -print_final_stats=1 -artifact_prefix="$out/" \
  "$out/work" "$out/seeds"

#!/usr/bin/env bash
# Prints the README's table of adversarial drives (scenario, the bound its test asserts, the
# worst arrival / departure error over its seeds, the false arrivals of the rules before
# plausibility) as PlaceMonitorAdversarialTests measures it: the test
# `readmeTableIsWhatTheScenariosMeasure` computes the table, writes it where
# WAYMARK_ADVERSARIAL_TABLE says, and fails when the documentation's table differs.
#
#   Scripts/adversarial-table.sh [swift test options, such as --skip-build]
set -uo pipefail
cd "$(dirname "$0")/.."
table=$(mktemp)
log=$(mktemp)
trap 'rm -f "$table" "$log"' EXIT
WAYMARK_ADVERSARIAL_TABLE="$table" swift test "$@" \
  --filter 'PlaceMonitorAdversarialTests/readmeTableIsWhatTheScenariosMeasure' > "$log" 2>&1
status=$?
if [ ! -s "$table" ]; then
  tail -n 30 "$log" >&2
  echo "Error: the test did not write the table (swift test exit $status)" >&2
  exit 1
fi
cat "$table"
echo
if ((status != 0)); then
  echo "adversarial-table: the documentation's table differs from this one (swift test exit $status)" >&2
  exit 1
fi

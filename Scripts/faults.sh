#!/usr/bin/env bash
# Waymark's fault campaign (docs/reliability.md): it runs on demand, prints a table and exits
# non-zero when any stage fails. Not part of the test suite; CI runs `--smoke` so it cannot rot.
#
#   Scripts/faults.sh [--smoke] [--only fuzz,kill,flaps,disk,clock,load] [--build-dir <dir>]
#                     [--kills <n>] [--flaps <n>] [--nmea-runs <n>] [--broker-runs <n>]
#                     [--parser-runs <n>] [--session-runs <n>] [--mqtt-runs <n>]
#                     [--invariant-runs <n>] [--fills <n>]
#                     [--clock-jumps <n>]
#                     [--load-clients <n>] [--load-seconds <s>]
#
# Stages:
#   fuzz   Fuzz/run.sh (NMEA framer, decoder, assembler; 10,000,000 inputs) and
#          Fuzz/run-broker.sh (the socket's request parser; 1,000,000; and with `messages` the
#          daemon's lines, decoded and written again byte for byte; 1,000,000), Fuzz/run-invariant.sh
#          (the trust invariant as the oracle over the real broker loop: nine principals of
#          different users and programs sending every request class; 1,000,000), libFuzzer +
#          AddressSanitizer, each harness checking its invariants; seeded from the demo log and
#          Tests/Fixtures/gpsd when present; Fuzz/run-parsers.sh config, places, grants,
#          monitor and waypoints (the daemon's configuration, the GeoJSON places file,
#          grants.json, a monitor's saved state, an MQTT setWaypoints command and OwnTracks
#          messages from any fix numbers; 1,000,000 each); Fuzz/run-live.sh session (the whole gpsd
#          session: a gpsd impostor's mutated JSON through the real libgps into the real daemon,
#          publishing to a real mosquitto; the daemon survives, its store is intact, nothing is
#          written outside its state directory; 1,000,000 lines) and mqtt (MQTT
#          commands: mutated setWaypoints through a real mosquitto to the real daemon, which
#          takes each one, keeps every place within the limits and survives; 1,000,000) and
#          replay (`waymark replay --mqtt` of NMEA with hostile fields; 1,000,000 sentences).
#   kill   kill -9 of waymarkd at random moments of a live drive (a real gpsd fed through a
#          pseudo-terminal by `waymark simulate --gpsd`), 200 times, each followed by a restart:
#          after every kill `PRAGMA integrity_check` must say ok; at the end every visit of an
#          uninterrupted run of the same drive that lasted 2 minutes or more must be there once,
#          with its arrival and departure within 60 s of drive time (fixes sent while the daemon
#          was down are lost: gpsd does not keep them; the largest shift is reported), every
#          visit recorded must be one of the uninterrupted run's (a spurious re-arrival after a
#          kill is an extra visit), and no place may have two visits that overlap.
#   flaps  During one live drive under waymarkd, 50 kill/restart cycles of gpsd, then 50
#          unplug/replug cycles of the receiver (gpsdctl remove/add): the daemon must reconnect
#          and see the receiver again every time (counted in its log), still run at the end,
#          its resident memory must not grow by more than 2 MB from the 5th cycle to the last,
#          and its visits must match an uninterrupted run's both ways as for kill, within 120 s (each gpsd
#          restart costs the daemon's reconnect backoff, seconds of real time = tens of seconds
#          of a drive played at 13-15x).
#   disk   Scripts/faults/disk.sh: the store on a 16 MB tmpfs filled up mid-stay 3 times during
#          a live drive (the daemon logs it once, keeps monitoring, writes what it held once
#          space is back: every event while full held, all recorded later; integrity_check ok; the
#          visits exactly the uninterrupted run's, all of them, none more), then garbage,
#          newer-schema, read-only (file, directory, file system) stores for waymarkd and
#          `waymark visits` (exit code, one line naming the file, the file unchanged).
#          Root only: the campaign runs in a private mount namespace (unshare -m).
#   clock  A live drive whose receiver reports dates 1,024 weeks early (week rollover) under a
#          waymarkd whose system clock jumps +1 h and -1 h in turns, 40 times (libfaketime):
#          visits as the uninterrupted run's (60 s), as many, one gpsd connection. Then the
#          drive replayed across midnight (RMC and GGA-only), with a leap second 23:59:60 and
#          1,024 weeks early: the same visits, moved by exactly the log's shift.
#   load   1,000 clients of waymarkd's socket connecting and disconnecting (half of them
#          watching) during a 60 s 10 Hz live drive through places, against the same drive
#          without them: place events' delay (write into the receiver's pty to arrival at a
#          watcher) median and p99, both; same events, no client starved, anonymous memory bounded.
# --smoke: the same stages, small (the fuzzers built without optimisation, 3,000 inputs each,
# 3 kills and 2 + 2 flaps on the first part of the drive, played at 15x, one fill at 40x, 2 clock
# jumps, 100 clients for 5 s), and at once: the fuzzers' builds beside the reference drive, then
# every live stage together (each on its own gpsd, daemon and store); about two minutes.
# Needs: swiftc with -sanitize=fuzzer (the toolchain), gpsd, sqlite3, python3, mosquitto, util-linux
# (unshare, setpriv, mount), libfaketime (Scripts/install-deps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
smoke=0
only=""
build=".build/release"
kills=200
flaps=50
nmea_runs=10000000
broker_runs=1000000
invariant_runs=1000000
parser_runs=1000000
session_runs=1000000
mqtt_runs=1000000
disk_fills=3
disk_rate=13
arguments=("$@")
clock_jumps=40
load_clients=1000
load_seconds=60
while (($#)); do
  case "$1" in
    --smoke) smoke=1; shift ;;
    --only) only="${2:?--only needs fuzz or kill}"; shift 2 ;;
    --build-dir) build="${2:?--build-dir needs a directory}"; shift 2 ;;
    --kills) kills="${2:?--kills needs a number}"; shift 2 ;;
    --flaps) flaps="${2:?--flaps needs a number}"; shift 2 ;;
    --nmea-runs) nmea_runs="${2:?--nmea-runs needs a number}"; shift 2 ;;
    --broker-runs) broker_runs="${2:?--broker-runs needs a number}"; shift 2 ;;
    --invariant-runs) invariant_runs="${2:?--invariant-runs needs a number}"; shift 2 ;;
    --parser-runs) parser_runs="${2:?--parser-runs needs a number}"; shift 2 ;;
    --session-runs) session_runs="${2:?--session-runs needs a number}"; shift 2 ;;
    --mqtt-runs) mqtt_runs="${2:?--mqtt-runs needs a number}"; shift 2 ;;
    --fills) disk_fills="${2:?--fills needs a number}"; shift 2 ;;
    --clock-jumps) clock_jumps="${2:?--clock-jumps needs a number}"; shift 2 ;;
    --load-clients) load_clients="${2:?--load-clients needs a number}"; shift 2 ;;
    --load-seconds) load_seconds="${2:?--load-seconds needs a number}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "Error: unknown argument '$1' (see --help)" >&2; exit 64 ;;
  esac
done
for stage in ${only//,/ }; do
  case "$stage" in
    fuzz|kill|flaps|disk|clock|load) ;;
    *) echo "Error: --only takes fuzz, kill, flaps, disk, clock and load (comma-separated), not '$stage'" >&2; exit 64 ;;
  esac
done
# Whether stage $1 runs.
runs_stage() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
# The disk stage mounts file systems: the whole campaign runs in a private mount namespace, so
# that they vanish with it.
if runs_stage disk && [ "$(id -u)" = 0 ] && [ -z "${WAYMARK_FAULTS_NAMESPACE:-}" ] \
  && unshare -m --propagation private true 2> /dev/null; then
  WAYMARK_FAULTS_NAMESPACE=1 exec unshare -m --propagation private "$0" "${arguments[@]}"
fi
if ((smoke)); then
  kills=3
  flaps=2
  nmea_runs=3000
  broker_runs=3000
  invariant_runs=3000
  parser_runs=3000
  session_runs=3000
  mqtt_runs=3000
  disk_fills=1
  disk_rate=40
  clock_jumps=2
  load_clients=100
  load_seconds=5
  export FUZZ_OPTIMIZE=-Onone
fi
for binary in waymark waymarkd; do
  [ -x "$build/$binary" ] || {
    echo "Error: $build/$binary missing; run swift build -c release -j 2 (or give --build-dir)" >&2
    exit 66
  }
done
waymark="$(cd "$build" && pwd)/waymark"
waymarkd="$(cd "$build" && pwd)/waymarkd"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Each stage writes its rows to a file of its own (stages may run at once, see --smoke), and a
# failing row leaves a mark.
rows_file="$scratch/rows.0"

# Records a table row: what, how many, failures, seconds, notes.
row() {
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$5" >> "$rows_file"
  [ "$3" = "0" ] || touch "$scratch/failed"
}

# libFuzzer's "Done N runs" and its exit status, as a row.
fuzz_stage() {
  local name=$1 script=$2 runs=$3 log="$scratch/$1.log" start=$SECONDS
  if (($# > 3)); then bash "$script" "$4" "$runs" > "$log" 2>&1; else bash "$script" "$runs" > "$log" 2>&1; fi
  local status=$?
  local done_runs
  done_runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -n 1 | grep -o '[0-9]*')
  if [ "$status" -eq 0 ] && [ "${done_runs:-0}" -ge "$runs" ]; then
    row "fuzz: $name" "$done_runs inputs" 0 $((SECONDS - start)) "no crash, every check held"
  else
    local reason
    reason=$(grep -m 1 -E 'Fatal error|Precondition failed|ERROR: AddressSanitizer|error:' "$log" | cut -c1-120)
    row "fuzz: $name" "${done_runs:-0} of $runs inputs" 1 $((SECONDS - start)) \
      "exit $status: ${reason:-see $log}"
    cp "$log" "/tmp/waymark-faults-$name.log" 2>/dev/null
  fi
}

stage_fuzz() {
  fuzz_stage nmea Fuzz/run.sh "$nmea_runs"
  fuzz_stage broker Fuzz/run-broker.sh "$broker_runs"
  fuzz_stage messages Fuzz/run-broker.sh "$broker_runs" messages
  fuzz_stage invariant Fuzz/run-invariant.sh "$invariant_runs"
  for parser in config places grants monitor waypoints; do
    fuzz_stage "$parser" Fuzz/run-parsers.sh "$parser_runs" "$parser"
  done
  WAYMARK_BUILD_DIR="$(dirname "$waymark")" fuzz_stage session Fuzz/run-live.sh "$session_runs" session
  WAYMARK_BUILD_DIR="$(dirname "$waymark")" fuzz_stage mqtt Fuzz/run-live.sh "$mqtt_runs" mqtt
  WAYMARK_BUILD_DIR="$(dirname "$waymark")" fuzz_stage replay-mqtt Fuzz/run-live.sh "$mqtt_runs" replay
}

# Compares the visits of a disturbed run ($2) with an uninterrupted run's ($1), both NDJSON
# from `waymark visits`, as sets, both ways: each visit of $1 (with $4 = long, only those of 2
# minutes or more: a disturbance that loses fixes may lose a short one) must be in $2, and each
# visit of $2 must be a visit of $1 (a spurious re-arrival after a kill is an extra visit); two
# visits are the same when the place is, and the arrival and departure (or both still open) are
# within $3 seconds of drive time (0: exactly, to the millisecond). No two visits of a place
# overlap. Prints "<compared> <largest shift s> <problems> <what>": what is the diff, a
# "missing <visit>" for each visit of $1 not in $2 and an "extra <visit>" for each visit of $2
# not in $1.
compare_visits() {
  python3 - "$1" "$2" "$3" "${4:-long}" <<'PY'
import json, sys
from datetime import datetime
def load(path):
    rows = [json.loads(line) for line in open(path) if line.startswith('{')]
    return [r for r in rows if r.get("class") == "VISIT"]
def t(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else None
def show(v):
    return f'{v["place"]} {v["arrival"]} to {v.get("departure") or "(open)"}'
reference, campaign = load(sys.argv[1]), load(sys.argv[2])
tolerance, which = float(sys.argv[3]), sys.argv[4]
def same(a, b):
    if a["place"] != b["place"] or abs(t(a["arrival"]) - t(b["arrival"])) > tolerance:
        return False
    if not a.get("departure") or not b.get("departure"):
        return not a.get("departure") and not b.get("departure")
    return abs(t(a["departure"]) - t(b["departure"])) <= tolerance
def shift(a, b):
    return max(abs(t(a["arrival"]) - t(b["arrival"])),
               abs(t(a["departure"]) - t(b["departure"])) if a.get("departure") else 0.0)
required = [v for v in reference
            if which == "all" or (v.get("departure") and v["duration"] >= 120)]
problems, largest, unmatched = [], 0.0, list(campaign)
# Each visit of the campaign stands for one visit of the reference: the closest one.
for visit in sorted(reference, key=lambda v: v not in required):
    candidates = [c for c in unmatched if same(visit, c)]
    if candidates:
        match = min(candidates, key=lambda c: shift(visit, c))
        unmatched.remove(match)
        largest = max(largest, shift(visit, match))
    elif visit in required:
        problems.append("missing " + show(visit))
problems += ["extra " + show(c) for c in unmatched]
for i, a in enumerate(campaign):
    for b in campaign[i + 1:]:
        if a["place"] == b["place"] and a.get("departure") and b.get("departure") \
           and t(a["arrival"]) < t(b["departure"]) and t(b["arrival"]) < t(a["departure"]):
            problems.append(f'{a["place"]}: overlapping visits {a["arrival"]} and {b["arrival"]}')
if not required:
    problems.append("the uninterrupted run recorded no visit to compare")
print(f'{len(required)} {largest:.3f} {len(problems)} ' + "; ".join(problems))
PY
}

# The uninterrupted run's visits, "$scratch/reference.visits" (the kill stage's, else a drive of
# its own), and the log they come from, "$reference_log".
reference_visits() {
  reference_log=Demo/drive.nmea
  local rate=13
  if ((smoke)); then
    # Home and the bakery: the first 10 minutes of the drive. Written once (and whole, by a
    # rename): stages running at once read it.
    if [ ! -s "$scratch/short.nmea" ]; then
      local part
      part=$(mktemp "$scratch/short.nmea.XXXXXX")
      head -n 2700 Demo/drive.nmea > "$part"
      mv "$part" "$scratch/short.nmea"
    fi
    reference_log="$scratch/short.nmea"
    rate=15
  fi
  [ -s "$scratch/reference.visits" ] && return
  "$waymark" places import Demo/places.geojson --store "$scratch/reference.db" > /dev/null 2>&1
  "$waymark" auth grant waymarkd always --store "$scratch/reference.db" > /dev/null
  drive "$reference_log" "$scratch/reference.db" 0 "$rate" reference > /dev/null
  "$waymark" visits --store "$scratch/reference.db" --format ndjson > "$scratch/reference.visits" 2>&1
}

# --- kill -9 ---------------------------------------------------------------------------------

# Plays `$1` through a private gpsd and runs waymarkd on store `$2` until the drive ends,
# killing it with SIGKILL `$3` times at random moments (each followed by a restart and an
# integrity check). Prints "<kills done> <failures>" (integrity checks failed, or a daemon that
# ended by itself before the drive did).
drive() {
  local log=$1 store=$2 kill_count=$3 rate=$4 tag=$5
  "$waymark" simulate "$log" --rate "$rate" --gpsd > "$scratch/$tag.sim" 2> "$scratch/$tag.sim.err" &
  local simulator=$!
  local endpoint=""
  for _ in $(seq 100); do
    endpoint=$(head -n 1 "$scratch/$tag.sim" 2>/dev/null | sed -n 's/.*"gpsd":"\([^"]*\)".*/\1/p')
    [ -n "$endpoint" ] && break
    sleep 0.1
  done
  [ -n "$endpoint" ] || { echo "0 1"; kill "$simulator" 2>/dev/null; return; }
  printf 'gpsd = %s\nstore = %s\nsocket = none\nauthorization-check = 1\nsave-interval = 5\n' \
    "$endpoint" "$store" > "$scratch/$tag.conf"
  "$waymarkd" --config "$scratch/$tag.conf" 2>> "$scratch/$tag.daemon.log" &
  local daemon=$!
  local done_kills=0 bad=0
  while kill -0 "$simulator" 2>/dev/null; do
    if ((done_kills < kill_count)); then
      # Once the daemon is back on gpsd (its log says so; at most 5 s), a random moment 0.3-1.5 s
      # later: mid-transaction some of the time, never before it could record anything.
      for _ in $(seq 50); do
        (($(grep -c 'connected to gpsd at' "$scratch/$tag.daemon.log" 2>/dev/null) > done_kills)) && break
        sleep 0.1
      done
      sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 1.5), 3))')"
      kill -0 "$simulator" 2>/dev/null || break
      kill -9 "$daemon" 2>/dev/null
      wait "$daemon" 2>/dev/null
      done_kills=$((done_kills + 1))
      [ "$(sqlite3 "$store" 'PRAGMA integrity_check;' 2>&1)" = "ok" ] || bad=$((bad + 1))
      "$waymarkd" --config "$scratch/$tag.conf" 2>> "$scratch/$tag.daemon.log" &
      daemon=$!
    else
      # A daemon that ended by itself (it could not start, say) would leave the simulator
      # waiting for its client for ever: a failure, and the end of the drive.
      if ! kill -0 "$daemon" 2>/dev/null; then
        echo "drive $tag: waymarkd exited before the drive ended" >> "$scratch/$tag.daemon.log"
        bad=$((bad + 1))
        kill "$simulator" 2>/dev/null
        break
      fi
      sleep 0.2
    fi
  done
  sleep 1
  kill -TERM "$daemon" 2>/dev/null
  wait "$daemon" 2>/dev/null
  wait "$simulator" 2>/dev/null
  echo "$done_kills $bad"
}

stage_kill() {
  start=$SECONDS
  reference_visits
  log=$reference_log rate=13
  ((smoke)) && rate=15
  "$waymark" places import Demo/places.geojson --store "$scratch/campaign.db" > /dev/null 2>&1
  "$waymark" auth grant waymarkd always --store "$scratch/campaign.db" > /dev/null
  read -r done_kills campaign_bad < <(drive "$log" "$scratch/campaign.db" "$kills" "$rate" campaign)
  "$waymark" visits --store "$scratch/campaign.db" --format ndjson > "$scratch/campaign.visits" 2>&1
  comparison=$(compare_visits "$scratch/reference.visits" "$scratch/campaign.visits" 60)
  read -r long_count largest_shift problem_count problem_text <<< "$comparison"
  failures=$((campaign_bad + ${problem_count:-1}))
  if ((done_kills < kills)); then failures=$((failures + 1)); fi
  row "kill -9 of waymarkd during a live drive" "$done_kills of $kills kills" "$failures" \
    $((SECONDS - start)) \
    "integrity_check failures: $campaign_bad; $long_count visit(s) of 2 min or more compared, largest shift ${largest_shift:-?} s${problem_text:+; $problem_text}"
  ((failures == 0)) || cp "$scratch/campaign.daemon.log" /tmp/waymark-faults-daemon.log 2>/dev/null
}

# --- gpsd flaps ------------------------------------------------------------------------------

# A free TCP port on the loopback interface.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# waymarkd's anonymous resident memory in kB (heap, stacks, written data: where a leak shows).
# Not VmRSS: the daemon gives back the code pages it has not run for a save interval, so its
# file-backed pages come and go with what it last did.
rss() { awk '/^RssAnon/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

stage_flaps() {
  start=$SECONDS
  reference_visits
  log=$reference_log rate=13
  ((smoke)) && rate=15
  store="$scratch/flaps.db"
  "$waymark" places import Demo/places.geojson --store "$store" > /dev/null 2>&1
  "$waymark" auth grant waymarkd always --store "$store" > /dev/null
  # The receiver on a pty (no private gpsd): gpsd is ours to kill.
  "$waymark" simulate "$log" --rate "$rate" --wait 2 > "$scratch/flaps.sim" 2> "$scratch/flaps.sim.err" &
  simulator=$!
  device=""
  for _ in $(seq 100); do
    device=$(head -n 1 "$scratch/flaps.sim" 2>/dev/null | sed -n 's/.*"device":"\([^"]*\)".*/\1/p')
    [ -n "$device" ] && break
    sleep 0.05
  done
  port=$(free_port)
  control="$scratch/gpsd.sock"
  start_gpsd() { gpsd -N -n -b -S "$port" -F "$control" "$device" 2> /dev/null & gpsd_pid=$!; }
  start_gpsd
  printf 'gpsd = 127.0.0.1:%s\nstore = %s\nsocket = none\nauthorization-check = 1\n' \
    "$port" "$store" > "$scratch/flaps.conf"
  "$waymarkd" --config "$scratch/flaps.conf" 2> "$scratch/flaps.daemon.log" &
  daemon=$!
  pause() { sleep "$(python3 -c 'import random; print(round(random.uniform(0.4, 1.0), 3))')"; }
  restarts=0 unplugs=0 warm=0
  for cycle in $(seq "$flaps"); do
    pause
    kill -TERM "$gpsd_pid" 2>/dev/null; wait "$gpsd_pid" 2>/dev/null
    sleep 0.2
    start_gpsd
    restarts=$((restarts + 1))
    ((cycle == 5 || (flaps < 5 && cycle == 1))) && warm=$(rss "$daemon")
  done
  for _ in $(seq "$flaps"); do
    pause
    # Unplugged until the daemon says so (at most 5 s), then plugged in again.
    before=$(grep -c 'reports no receiver' "$scratch/flaps.daemon.log")
    GPSD_SOCKET="$control" gpsdctl remove "$device" > /dev/null 2>&1
    for _ in $(seq 50); do
      (($(grep -c 'reports no receiver' "$scratch/flaps.daemon.log") > before)) && break
      sleep 0.1
    done
    GPSD_SOCKET="$control" gpsdctl add "$device" > /dev/null 2>&1
    unplugs=$((unplugs + 1))
  done
  sleep 2
  final=$(rss "$daemon")
  alive=0; kill -0 "$daemon" 2>/dev/null && alive=1
  wait "$simulator" 2>/dev/null
  sleep 1
  kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null
  kill -TERM "$gpsd_pid" 2>/dev/null; wait "$gpsd_pid" 2>/dev/null
  "$waymark" visits --store "$store" --format ndjson > "$scratch/flaps.visits" 2>&1
  reconnects=$(grep -c 'connected to gpsd at' "$scratch/flaps.daemon.log")
  # Each unplug the daemon reported must be followed by the receiver seen again. (The first
  # plug-in is not counted: the daemon logs "receiver present" when gpsd's report of a device
  # changes while gpsd is reachable, which across the gpsd restarts above it may not.)
  read -r unplugged replugs <<< "$(awk '/reports no receiver/ { if (!gone) n++; gone = 1 }
    /receiver present/ { if (gone) back++; gone = 0 } END { print n + 0, back + 0 }' \
    "$scratch/flaps.daemon.log")"
  read -r long_count largest_shift problem_count problem_text \
    <<< "$(compare_visits "$scratch/reference.visits" "$scratch/flaps.visits" 120)"
  failures=${problem_count:-1}
  notes="reconnected $reconnects times (of $((restarts + 1)) gpsd starts), receiver seen gone"
  notes+=" $unplugged times and back $replugs times (of $unplugs unplugs); anonymous memory $((warm / 1024)).$((warm % 1024 * 10 / 1024)) MB"
  notes+=" at cycle 5, $((final / 1024)).$((final % 1024 * 10 / 1024)) MB at the end"
  notes+="; $long_count visit(s) compared, largest shift ${largest_shift:-?} s"
  ((reconnects >= restarts + 1)) || failures=$((failures + 1))
  ((unplugged >= unplugs && replugs == unplugged)) || failures=$((failures + 1))
  ((alive)) || { failures=$((failures + 1)); notes+="; the daemon died"; }
  ((final - warm <= 2048)) || { failures=$((failures + 1)); notes+="; memory grew"; }
  [ -n "$problem_text" ] && notes+="; $problem_text"
  row "gpsd killed and restarted, receiver unplugged and replugged, live drive" \
    "$restarts + $unplugs cycles" "$failures" $((SECONDS - start)) "$notes"
  ((failures == 0)) || cp "$scratch/flaps.daemon.log" /tmp/waymark-faults-flaps.log 2>/dev/null
}

stage_disk() { source Scripts/faults/disk.sh; }
stage_clock() { source Scripts/faults/clock.sh; }
stage_load() { source Scripts/faults/load.sh; }

# Runs the stages given, in the table's order: one after the other (the figures of a full
# campaign are each stage's alone), or, with --smoke, at once: the live drives mostly wait on
# their receivers' pace, so the fuzzers' builds and the reference drive share the machine first,
# then every live stage at once.
stages=(fuzz kill flaps disk clock load)
run_stage() { rows_file="$scratch/rows.$2"; "stage_$1"; }
if ((smoke)); then
  if runs_stage kill || runs_stage flaps || runs_stage disk || runs_stage clock; then
    (reference_visits) &
  fi
  runs_stage fuzz && (run_stage fuzz 1) &
  wait
  for index in 2 3 4 5 6; do
    name=${stages[index - 1]}
    runs_stage "$name" && (run_stage "$name" "$index") &
  done
  wait
else
  for index in 1 2 3 4 5 6; do
    name=${stages[index - 1]}
    if runs_stage "$name"; then run_stage "$name" "$index"; fi
  done
fi

echo
echo "Waymark fault campaign, $(date -u +%Y-%m-%dT%H:%MZ)$( ((smoke)) && echo ' (smoke)')"
echo
echo "| stage | how many | failures | seconds | notes |"
echo "|---|---:|---:|---:|---|"
cat "$scratch"/rows.* 2> /dev/null
if [ -e "$scratch/failed" ] || ! ls "$scratch"/rows.* > /dev/null 2>&1; then
  echo
  echo "faults: FAILED (logs under /tmp/waymark-faults-*)"
  exit 1
fi
echo
echo "faults: every stage held"

# The clock stage of Scripts/faults.sh (sourced; uses its $waymark, $waymarkd, $scratch, drive,
# compare_visits, row, $smoke, $log, $rate and $clock_jumps).
#
# 1. System clock jumps: one live drive (real gpsd, `waymark simulate --gpsd`) whose receiver
#    has the GPS week-rollover bug (every RMC date 1,024 weeks early), under a waymarkd whose
#    CLOCK_REALTIME jumps +1 h and -1 h in turns (libfaketime, FAKETIME_TIMESTAMP_FILE changed
#    while it runs; CLOCK_MONOTONIC left alone, as a real clock step leaves it). Its visits must
#    match the uninterrupted run's (within 60 s, as for kill), as many, one gpsd connection.
# 2. Receiver dates through the decoder (`waymark replay --store`, no gpsd): the drive moved to
#    cross UTC midnight, with RMC dates and GGA-only (the date carried over midnight), with a
#    leap second 23:59:60 inserted, and 1,024 weeks early: each gives the drive's visits, each
#    moved by exactly the time the log was moved (0 for the rollover: see docs/reliability.md).

# The NMEA of `$1` with every time moved by `$2` seconds (dates in RMC ddmmyy), written to `$3`;
# `--leap` inserts a 23:59:60 epoch (a copy of 23:59:59's), `--gga-only` drops RMC sentences and
# `--rollover` moves RMC dates (only) 1,024 weeks back.
shift_log() {
  python3 - "$@" <<'PY'
import sys
from datetime import datetime, timedelta, timezone
source, seconds, target, *flags = sys.argv[1:]
shift = timedelta(seconds=float(seconds))
rollover = timedelta(weeks=1024) if "--rollover" in flags else timedelta(0)
def checksum(body):
    value = 0
    for byte in body.encode():
        value ^= byte
    return f"{value:02X}"
def moved(line, date):
    body = line[1:line.index("*")]
    fields = body.split(",")
    kind = fields[0][-3:]
    if kind in ("GGA", "RMC", "GST") and fields[1]:
        stamp = datetime.strptime(date + fields[1], "%d%m%y%H%M%S.%f").replace(tzinfo=timezone.utc)
        stamp += shift
        fields[1] = stamp.strftime("%H%M%S.") + f"{stamp.microsecond // 1000:03d}"
        if kind == "RMC":
            fields[9] = (stamp - rollover).strftime("%d%m%y")
    body = ",".join(fields)
    return f"${body}*{checksum(body)}", fields[1], kind
out = []
date = None
previous = None
for raw in open(source):
    line = raw.rstrip("\r\n")
    if not line.startswith("$"):
        out.append(line)
        continue
    fields = line.split(",")
    if fields[0][-3:] == "RMC":
        date = fields[9]
    if date is None:
        date = "291126"
    text, stamp, kind = moved(line, date)
    if kind == "RMC" and "--gga-only" in flags:
        continue
    if "--leap" in flags and kind in ("GGA", "RMC", "GST") and stamp.startswith("000000") \
       and previous and previous[0].startswith("235959"):
        # The epoch before midnight again, at 23:59:60 (same position: the receiver stood).
        for earlier in previous[1]:
            body = earlier[1:earlier.index("*")].replace(",235959.", ",235960.", 1)
            if ",235960." not in body:
                continue
            out.append(f"${body}*{checksum(body)}")
        previous = None
    if kind in ("GGA", "RMC", "GST"):
        if previous is None or previous[0] != stamp:
            previous = (stamp, [])
        previous[1].append(text)
    out.append(text)
open(target, "w").write("\n".join(out) + "\n")
PY
}

# `waymark replay --store` of `$1` into a fresh store `$2` (with --date 2026-11-29 when `$3`),
# its visits as NDJSON in `$2.visits`; prints the replay's exit status.
replay_visits() {
  "$waymark" places import Demo/places.geojson --store "$2" > /dev/null 2>&1
  "$waymark" replay "$1" --store "$2" ${3:+--date "$3"} > /dev/null 2> "$2.err"
  local status=$?
  "$waymark" visits --store "$2" --format ndjson > "$2.visits" 2>&1
  echo "$status"
}

# Whether the visits of `$2` are those of `$1` moved by `$3` seconds, to the millisecond: prints
# "<visits> <problems>".
same_visits_moved() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
from datetime import datetime
def load(path):
    return [json.loads(line) for line in open(path) if line.startswith('{"class":"VISIT"')]
def t(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else None
reference, moved, shift = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
problems = 0 if len(reference) == len(moved) and reference else 1
for a, b in zip(reference, moved):
    if a["place"] != b["place"] or abs(t(b["arrival"]) - t(a["arrival"]) - shift) > 0.0005 \
       or (a.get("departure") is None) != (b.get("departure") is None) \
       or (a.get("departure") and abs(t(b["departure"]) - t(a["departure"]) - shift) > 0.0005):
        problems += 1
print(len(reference), problems)
PY
}

start=$SECONDS
# As for kill: the whole drive at 13x, or its first 10 minutes at 15x (--smoke); the
# uninterrupted run's visits are the campaign's (reference_visits).
reference_visits
log=$reference_log rate=13
((smoke)) && rate=15
# --- 1. the host clock jumps under waymarkd --------------------------------------------------
faketime_library=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
clock_file="$scratch/faketime"
echo "+0" > "$clock_file"
# `faketime-run <program> <arguments>` runs it with that clock. The shell that execs the program
# has libfaketime loaded already: preloaded straight into a Swift binary by an unpreloaded
# parent, libfaketime 0.9.10 leaves it an empty CommandLine.arguments (waymarkd then reads the
# default configuration). exec twice: the same pid, so drive's kill -TERM reaches the daemon.
printf '#!/bin/sh\nexport LD_PRELOAD=%s FAKETIME_TIMESTAMP_FILE=%s FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1\nexec sh -c %s "$@"\n' \
  "$faketime_library" "$clock_file" "'exec \"\$0\" \"\$@\"'" > "$scratch/faketime-run"
printf '#!/bin/sh\nexec %q %q "$@"\n' "$scratch/faketime-run" "$waymarkd" > "$scratch/waymarkd-faketime"
chmod +x "$scratch/faketime-run" "$scratch/waymarkd-faketime"
clock_failures=0
clock_notes=""
# libfaketime takes on these binaries: a stamp under +1 h is dated an hour ahead.
"$waymark" places import Demo/places.geojson --store "$scratch/stamp.db" > /dev/null 2>&1
echo "+1h" > "$clock_file"
stamp=$("$scratch/faketime-run" "$waymark" stamp --place home --store "$scratch/stamp.db" 2>&1)
echo "+0" > "$clock_file"
stamp_ahead=$(python3 -c '
import json, sys, time
from datetime import datetime
arrival = json.loads(sys.argv[1])["arrival"]
print(round(datetime.fromisoformat(arrival.replace("Z", "+00:00")).timestamp() - time.time()))
' "$stamp" 2>/dev/null)
stamp_ahead=${stamp_ahead:-0}
if ((stamp_ahead < 3590 || stamp_ahead > 3610)); then
  clock_failures=$((clock_failures + 1))
  clock_notes+="libfaketime did not take (a stamp under +1 h was ${stamp_ahead:-?} s ahead); "
fi
shift_log "$log" 0 "$scratch/rollover.nmea" --rollover
for tag in clock; do
  "$waymark" places import Demo/places.geojson --store "$scratch/$tag.db" > /dev/null 2>&1
  "$waymark" auth grant waymarkd always --store "$scratch/$tag.db" > /dev/null
done
saved_waymarkd=$waymarkd
waymarkd="$scratch/waymarkd-faketime"
clock_rate=$rate
((smoke)) && clock_rate=30
drive "$scratch/rollover.nmea" "$scratch/clock.db" 0 "$clock_rate" clock > "$scratch/clock.drive" &
driver=$!
waymarkd=$saved_waymarkd
jumps=0
offsets=("+1h" "+0" "-1h" "+0")
# The first jump once the daemon is on gpsd, then one every 4-8 s (a minute or two of drive).
for _ in $(seq 100); do
  grep -q 'connected to gpsd at' "$scratch/clock.daemon.log" 2>/dev/null && break
  sleep 0.1
done
daemon_pid=$(pgrep -n -f "$scratch/clock.conf")
preloaded=0
grep -q faketime "/proc/$daemon_pid/maps" 2>/dev/null && preloaded=1
while kill -0 "$driver" 2>/dev/null && ((jumps < clock_jumps)); do
  sleep "$(python3 -c 'import random; print(round(random.uniform(4, 8), 2))')"
  echo "${offsets[jumps % 4]}" > "$clock_file"
  jumps=$((jumps + 1))
done
wait "$driver"
echo "+0" > "$clock_file"
"$waymark" visits --store "$scratch/clock.db" --format ndjson > "$scratch/clock.visits" 2>&1
read -r long_count largest_shift problem_count problem_text \
  <<< "$(compare_visits "$scratch/reference.visits" "$scratch/clock.visits" 60)"
clock_failures=$((clock_failures + ${problem_count:-1}))
reference_count=$(grep -c '"class":"VISIT"' "$scratch/reference.visits")
clock_count=$(grep -c '"class":"VISIT"' "$scratch/clock.visits")
connections=$(grep -c 'connected to gpsd at' "$scratch/clock.daemon.log")
((preloaded)) || { clock_failures=$((clock_failures + 1)); clock_notes+="libfaketime not loaded in waymarkd; "; }
((jumps >= clock_jumps)) || { clock_failures=$((clock_failures + 1)); clock_notes+="only $jumps jumps; "; }
((clock_count == reference_count)) || {
  clock_failures=$((clock_failures + 1))
  clock_notes+="$clock_count visits against $reference_count; "
}
((connections == 1)) || { clock_failures=$((clock_failures + 1)); clock_notes+="$connections gpsd connections; "; }
clock_notes+="$jumps jumps of the daemon's clock (+1 h, -1 h in turns) with the receiver 1,024"
clock_notes+=" weeks early; $clock_count visits of $reference_count, $long_count of 2 min or more"
clock_notes+=" compared, largest shift ${largest_shift:-?} s; $connections gpsd connection(s)"
clock_notes+="${problem_text:+; $problem_text}"
row "system clock jumps under waymarkd, receiver week rollover, live drive" "$jumps jumps" \
  "$clock_failures" $((SECONDS - start)) "$clock_notes"
((clock_failures == 0)) || cp "$scratch/clock.daemon.log" /tmp/waymark-faults-clock.log 2>/dev/null

# --- 2. receiver dates through the decoder ---------------------------------------------------
start=$SECONDS
dates_failures=0
dates_notes=""
# The drive starts at 07:50:00; moved to start at 23:30:00 it crosses midnight during its office
# stay (--smoke: its first 10 minutes, moved to 23:55:00, during the stay at home).
midnight=$((15 * 3600 + 40 * 60))
((smoke)) && midnight=$((16 * 3600 + 5 * 60))
status=$(replay_visits "$log" "$scratch/dates-reference.db")
((status == 0)) || dates_failures=$((dates_failures + 1))
for variant in "midnight:$midnight:" "midnight-gga-only:$midnight:--gga-only" \
  "leap-second:$midnight:--leap" "leap-second-gga-only:$midnight:--leap --gga-only" \
  "rollover:0:--rollover"; do
  IFS=: read -r name seconds flags <<< "$variant"
  # shellcheck disable=SC2086 # flags are words
  shift_log "$log" "$seconds" "$scratch/$name.nmea" $flags
  date=""
  [[ "$flags" == *gga-only* ]] && date=2026-11-29
  status=$(replay_visits "$scratch/$name.nmea" "$scratch/dates-$name.db" "$date")
  expected=$seconds
  [ "$name" = rollover ] && expected=-619315200
  read -r visit_count problems \
    <<< "$(same_visits_moved "$scratch/dates-reference.db.visits" "$scratch/dates-$name.db.visits" "$expected")"
  if ((status != 0 || problems != 0)); then
    dates_failures=$((dates_failures + 1))
    dates_notes+="$name: exit $status, $problems visit(s) differ; "
  fi
done
leaps=$(grep -c ',235960\.' "$scratch/leap-second.nmea")
((leaps > 0)) || { dates_failures=$((dates_failures + 1)); dates_notes+="no 23:59:60 in the log; "; }
dates_notes+="the drive's $visit_count visits, to the millisecond, moved by the log's shift:"
dates_notes+=" across midnight (RMC dates, GGA-only with the date carried), with a leap second"
dates_notes+=" 23:59:60 (both), and 1,024 weeks early (replay keeps the receiver's date)"
row "receiver dates: midnight, leap second, week rollover (replay)" "5 logs" "$dates_failures" \
  $((SECONDS - start)) "$dates_notes"

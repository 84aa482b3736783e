# The load stage of Scripts/faults.sh (sourced; uses its $waymark, $waymarkd, $scratch, row,
# $smoke, $load_clients and $load_seconds): $load_clients socket clients connecting and
# disconnecting while a 10 Hz drive runs through a real gpsd (Scripts/faults/churn.py), against
# the same drive with only the steady watchers, in one invocation.

# A straight 10 Hz drive east at 20 m/s through places of 25 m every 100 m: an arrival and a
# departure about every 2.5 s of the drive. $1: seconds of driving; writes load.route, load.nmea
# and load.geojson in $scratch.
load_drive() {
  python3 - "$1" "$scratch" <<'PY'
import json, sys
seconds, scratch = float(sys.argv[1]), sys.argv[2]
lat, lon = 45.76000, 4.83000
metres_per_degree = 111_320 * 0.69779  # cos(45.76 degrees)
length = 20 * seconds
end = lon + length / metres_per_degree
with open(f"{scratch}/load.route", "w") as route:
    route.write(f"start 2026-11-30T10:00:00.000Z {lat} {lon}\nseed 13\nrate 10\nnoise 2\n"
                f"accuracy 5\nstop 1\ndrive {lat} {end:.6f} 20\nstop 1\n")
features = []
for index in range(int(length // 100)):
    centre = lon + (index + 0.5) * 100 / metres_per_degree
    features.append({"type": "Feature", "id": f"p{index}",
                     "geometry": {"type": "Point", "coordinates": [round(centre, 6), lat]},
                     "properties": {"name": f"Place {index}", "radius": 25}})
json.dump({"type": "FeatureCollection", "features": features},
          open(f"{scratch}/load.geojson", "w"))
PY
  "$waymark" synthesize "$scratch/load.route" --output "$scratch/load.nmea"
}

start=$SECONDS
# The daemon's soft open-file limit: systemd's default (1,024), or with --smoke fewer than the
# clients (100), which the daemon must raise itself. socket-clients leaves 100 of headroom: peers
# that closed since the daemon's last poll still count against it (at 1,024 for 1,005 clients
# about 4 % of the connects were refused at the limit, as designed, and retried).
load_nofile=1024
((smoke)) && load_nofile=100
load_drive "$load_seconds"
"$waymark" places import "$scratch/load.geojson" --store "$scratch/load.db" > /dev/null 2>&1
"$waymark" auth grant waymarkd always --store "$scratch/load.db" > /dev/null
# The clients are python3: their identity is <user>:<python's real path>; watching needs a grant.
python_id="$(id -un):$(python3 -c 'import os; print(os.path.realpath("/proc/self/exe"))')"
"$waymark" auth grant "$python_id" always --store "$scratch/load.db" > /dev/null
python3 Scripts/faults/churn.py --waymarkd "$waymarkd" --log "$scratch/load.nmea" \
  --store "$scratch/load.db" --scratch "$scratch" --clients "$load_clients" --nofile "$load_nofile" \
  --socket-clients $((load_clients + 100)) \
  > "$scratch/load.json" 2> "$scratch/load.err"
load_status=$?
summary=$(python3 - "$scratch/load.json" <<'PY'
import json, sys
try:
    quiet, churn = json.load(open(sys.argv[1]))
except Exception as error:
    print(f"1 the harness failed: {error}")
    sys.exit()
problems = []
for phase in (quiet, churn):
    if phase.get("error"):
        problems.append(f'{phase["phase"]}: {phase["error"]}')
    if not phase.get("alive"):
        problems.append(f'{phase["phase"]}: the daemon died')
    if not phase.get("events"):
        problems.append(f'{phase["phase"]}: no place event')
    if phase.get("tpvs_missing", 1):
        problems.append(f'{phase["phase"]}: {phase.get("tpvs_missing")} TPVs missing on the steady watchers')
if quiet.get("events") != churn.get("events"):
    problems.append("the events differ with churn")
if churn.get("starved", 1):
    problems.append(f'{churn.get("starved")} churn watcher(s) got no TPV in 1 s or more')
if churn.get("refused", 1) or churn.get("connect_errors", 1):
    problems.append(f'{churn.get("refused")} refused, {churn.get("connect_errors")} connect errors')
growth = churn.get("anon_kb_end", 0) - churn.get("anon_kb_start", 0)
if growth > 4096:
    problems.append(f"anonymous memory grew {growth} kB during the churn")
# The churn may slow an event's delivery, within a bound: its p99 at most 250 ms (measured:
# 12.7 ms with churn, 50.4 ms quiet), and each watcher's TPV p99 at most 100 ms (11.1 ms).
for name, limit in (("event_p99_ms", 250), ("tpv_p99_ms", 100)):
    value = churn.get(name)
    if value is None:
        problems.append(f"churn: no {name} measured")
    elif value > limit:
        problems.append(f"churn: {name} {value:.1f} ms, over the {limit} ms bound")
def ms(value):
    return "?" if value is None else f"{value:.1f}"
mb = lambda kb: f"{kb / 1024:.1f}"
print(f'{len(problems)} {churn.get("connects", 0)} connects ({churn.get("connects_per_second", 0)}/s) '
      f'during a drive of {len(quiet.get("events", []))} place events, {churn.get("event_delays", 0)} delays; '
      f'event delay median/p99 {ms(quiet.get("event_median_ms"))}/{ms(quiet.get("event_p99_ms"))} ms quiet, '
      f'{ms(churn.get("event_median_ms"))}/{ms(churn.get("event_p99_ms"))} ms with churn '
      f'(TPV {ms(quiet.get("tpv_median_ms"))}/{ms(quiet.get("tpv_p99_ms"))} and '
      f'{ms(churn.get("tpv_median_ms"))}/{ms(churn.get("tpv_p99_ms"))} ms); '
      f'anonymous memory {mb(churn.get("anon_kb_start", 0))} MB at the churn start, {mb(churn.get("anon_kb_max", 0))} MB at most, '
      f'{mb(quiet.get("anon_kb_max", 0))} MB quiet; starved {churn.get("starved")}, refused {churn.get("refused")}'
      + ("; " + "; ".join(problems) if problems else ""))
PY
)
read -r load_failures load_notes <<< "$summary"
((load_status == 0)) || { load_failures=$((load_failures + 1)); load_notes+="; churn.py exit $load_status"; }
row "$load_clients socket clients churning during a 10 Hz live drive" \
  "$load_clients clients" "$load_failures" $((SECONDS - start)) "$load_notes"
((load_failures == 0)) || cp "$scratch"/load-*.daemon.log "$scratch/load.err" /tmp/ 2>/dev/null

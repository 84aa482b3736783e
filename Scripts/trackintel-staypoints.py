"""Scores Waymark's stays and trackintel's staypoints against the true stops of the drives
written by `waymark-bench stays --drives` (see trackintel-staypoints.sh). Prints a Markdown
table: stops found, missed, false stays (a red light, a burst), median and 90th percentile of
the arrival and departure errors in seconds."""

import json
import sys
import warnings

import geopandas as gpd
import pandas as pd
import trackintel as ti

warnings.filterwarnings("ignore")
directory, days = sys.argv[1], int(sys.argv[2])


def read_truth(day):
    truth = pd.read_csv(f"{directory}/day-{day}.truth.csv")
    return [(pd.Timestamp(a), pd.Timestamp(d)) for a, d in zip(truth.arrival, truth.departure)]


def waymark_stays(day):
    stays = []
    with open(f"{directory}/day-{day}.waymark.ndjson") as lines:
        for line in lines:
            visit = json.loads(line)
            if visit.get("class") == "VISIT" and visit["departure"] is not None:
                stays.append((pd.Timestamp(visit["arrival"]), pd.Timestamp(visit["departure"])))
    return stays


def trackintel_stays(day, dist, time, gap):
    fixes = pd.read_csv(f"{directory}/day-{day}.csv")
    fixes["tracked_at"] = pd.to_datetime(fixes["time"], utc=True)
    fixes["user_id"] = 0
    frame = gpd.GeoDataFrame(
        fixes, geometry=gpd.points_from_xy(fixes.lon, fixes.lat), crs="EPSG:4326")
    pfs = ti.Positionfixes(frame)
    _, sp = pfs.generate_staypoints(
        method="sliding", distance_metric="haversine", dist_threshold=dist,
        time_threshold=time, gap_threshold=gap, include_last=True, print_progress=False,
        exclude_duplicate_pfs=True, n_jobs=1)
    return [(pd.Timestamp(a), pd.Timestamp(f)) for a, f in zip(sp.started_at, sp.finished_at)]


def score(found_by_day):
    found = missed = false = 0
    arrivals, departures = [], []
    for day, found_stays in found_by_day.items():
        truth = read_truth(day)
        used = set()
        for arrival, departure in truth:
            best, overlap = None, pd.Timedelta(0)
            for index, (a, d) in enumerate(found_stays):
                shared = min(d, departure) - max(a, arrival)
                if index not in used and shared > overlap:
                    best, overlap = index, shared
            if best is None:
                missed += 1
                continue
            used.add(best)
            found += 1
            a, d = found_stays[best]
            arrivals.append(abs((a - arrival).total_seconds()))
            departures.append(abs((d - departure).total_seconds()))
        false += len(found_stays) - len(used)
    series = pd.Series
    return (found, missed, false, series(arrivals).median(), series(arrivals).quantile(0.9),
            series(departures).median(), series(departures).quantile(0.9))


rows = [("Waymark StayDetector (defaults: 2 min)", score({d: waymark_stays(d) for d in range(1, days + 1)}))]
for dist, gap in [(100, 15), (50, 15)]:
    name = f"trackintel sliding, {dist} m, 2 min, gap {gap} min"
    rows.append((name, score({d: trackintel_stays(d, dist, 2.0, gap) for d in range(1, days + 1)})))
truths = sum(len(read_truth(d)) for d in range(1, days + 1))
print(f"{days} held-out days, {truths} true stops of 2.5-30 min\n")
print("| detector | found | missed | false | arrival median s | arrival p90 s | departure median s | departure p90 s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for name, (found, missed, false, am, a90, dm, d90) in rows:
    print(f"| {name} | {found} | {missed} | {false} | {am:.1f} | {a90:.1f} | {dm:.1f} | {d90:.1f} |")

"""Scores Waymark's stays against trackintel's staypoints (sliding method, 100 m, 5 min, gap
15 min: the academic reference) on NMEA logs as people have them — real trajectories, or the
duty-cycled logs `waymark-bench stays --drives DIR --duty-cycled` writes — and counts what in
them makes stays hard (see trackintel-logs.sh, which runs Waymark first).

For each log DIR/NAME.nmea it reads DIR/NAME.fixes.ndjson (`waymark replay --fixes`: the
decoded fixes, trackintel's input) and DIR/NAME.visits.ndjson (`waymark replay --visits`).

A log with a person's diary beside it (DIR/NAME.diary.csv: `arrival,departure` per stop, as
Tests/Fixtures/tracks has for the STAGA phone log) is also scored against that truth: of the
diary's stops of 5 min or more (and of all of them), those a Waymark stay overlaps and those a
reference staypoint overlaps; Waymark's and the reference's stays overlapping no diary stop
(false).

Printed, as Markdown:
- coverage: of the reference's staypoints (all of them last 5 min or more), the share that a
  Waymark stay overlaps; the same for those observed for 5 min or more before any gap in
  their fixes (a gap: 60 s or more without a fix), the figure the issue's target is set on;
- confirmation: of Waymark's closed stays of 5 min or more, the share a staypoint overlaps;
- the categories of the issue, counted: gaps of 1-15 min, and of them those that end with a
  jump of 15-40 m at walking pace (0.3-2.5 m/s over the fixes after it: the person stood, the
  logger slept, the person walked off); fixes whose accuracy is unknown or claimed at 5 m or
  better (HDOP 1.0) while the staypoint's fixes spread wider; fixes inside staypoints whose
  speed reads above 0.8 m/s; Waymark stays that bridge a gap longer than trackintel's 15 min;
  Waymark stays whose departure was inferred in a gap.
"""

import glob
import json
import math
import os
import sys
import warnings

import geopandas as gpd
import pandas as pd
import trackintel as ti

warnings.filterwarnings("ignore")
directory = sys.argv[1]
title = sys.argv[2] if len(sys.argv) > 2 else directory
GAP = 60.0


def read_ndjson(path, kind):
    with open(path) as lines:
        return [o for o in (json.loads(line) for line in lines if line.strip())
                if o.get("class") == kind]


def metres(a, b):
    (lat1, lon1), (lat2, lon2) = a, b
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(h))


def reference(fixes):
    frame = pd.DataFrame({
        "tracked_at": [f["time"] for f in fixes], "lat": [f["lat"] for f in fixes],
        "lon": [f["lon"] for f in fixes]})
    frame["tracked_at"] = pd.to_datetime(frame["tracked_at"], utc=True)
    frame["user_id"] = 0
    frame = gpd.GeoDataFrame(
        frame, geometry=gpd.points_from_xy(frame.lon, frame.lat), crs="EPSG:4326")
    _, sp = ti.Positionfixes(frame).generate_staypoints(
        method="sliding", distance_metric="haversine", dist_threshold=100, time_threshold=5.0,
        gap_threshold=15.0, include_last=True, print_progress=False,
        exclude_duplicate_pfs=True, n_jobs=1)
    return [(pd.Timestamp(a), pd.Timestamp(f)) for a, f in zip(sp.started_at, sp.finished_at)]


def overlaps(span, spans):
    return any(min(b, span[1]) > max(a, span[0]) for a, b in spans)


diary_totals = {k: 0 for k in [
    "stops", "stops_long", "waymark_found", "waymark_found_long", "reference_found",
    "reference_found_long", "waymark_stays", "waymark_false", "reference_stays",
    "reference_false"]}
diary_misses = []
totals = {k: 0 for k in [
    "logs", "fixes", "hours", "ref", "ref_found", "ref_observed", "ref_observed_found",
    "waymark", "waymark_confirmed", "gaps", "gaps_walked", "unknown_accuracy", "optimistic",
    "fast_at_rest", "with_speed_at_rest", "bridged", "inferred"]}
misses = []
for log in sorted(glob.glob(os.path.join(directory, "*.nmea"))):
    name = log[:-len(".nmea")]
    fixes = read_ndjson(name + ".fixes.ndjson", "TPV")
    if len(fixes) < 2:
        continue
    times = [pd.Timestamp(f["time"]) for f in fixes]
    points = [(f["lat"], f["lon"]) for f in fixes]
    totals["logs"] += 1
    totals["fixes"] += len(fixes)
    totals["hours"] += (times[-1] - times[0]).total_seconds() / 3600
    reference_stays = reference(fixes)
    visits = read_ndjson(name + ".visits.ndjson", "VISIT")
    closed = [v for v in visits if v["departure"] is not None]
    waymark = [(pd.Timestamp(v["arrival"]), pd.Timestamp(v["departure"])) for v in closed]
    # Coverage of the reference, overall and for the staypoints observed 5 min before a gap.
    for start, end in reference_stays:
        inside = [i for i, t in enumerate(times) if start <= t < end] or [0]
        # trackintel ends a staypoint at the first fix outside it, after any gap before that.
        observed_end = end
        if (end - times[inside[-1]]).total_seconds() >= GAP:
            observed_end = times[inside[-1]]
        for i in inside[1:]:
            if (times[i] - times[i - 1]).total_seconds() >= GAP:
                observed_end = times[i - 1]
                break
        found = overlaps((start, end), waymark)
        if not found:
            seen = (observed_end - start).total_seconds()
            misses.append(f"{os.path.basename(log)} {start:%H:%M:%S}-{end:%H:%M:%S} "
                          f"(observed {seen:.0f} s)")
        totals["ref"] += 1
        totals["ref_found"] += found
        if (observed_end - start).total_seconds() >= 300:
            totals["ref_observed"] += 1
            totals["ref_observed_found"] += found
        # Fixes at rest: their reported accuracy against their spread, and their speed.
        centre = (sum(points[i][0] for i in inside) / len(inside),
                  sum(points[i][1] for i in inside) / len(inside))
        spread = sorted(metres(points[i], centre) for i in inside)[len(inside) // 2]
        for i in inside:
            accuracy = fixes[i].get("eph")
            if accuracy is None:
                totals["unknown_accuracy"] += 1
            elif accuracy <= 5 and spread > 2 * accuracy:
                totals["optimistic"] += 1
            if "speed" in fixes[i]:
                totals["with_speed_at_rest"] += 1
                totals["fast_at_rest"] += fixes[i]["speed"] > 0.8
    for a, b in waymark:
        if (b - a).total_seconds() >= 300:
            totals["waymark"] += 1
            totals["waymark_confirmed"] += overlaps((a, b), reference_stays)
    # Gaps, and those that end with a short jump at walking pace.
    for i in range(1, len(fixes)):
        seconds = (times[i] - times[i - 1]).total_seconds()
        if 60 <= seconds <= 900:
            totals["gaps"] += 1
            jump = metres(points[i - 1], points[i])
            later = next((j for j in range(i + 1, len(fixes))
                          if (times[j] - times[i]).total_seconds() >= 20), None)
            if 15 <= jump <= 40 and later is not None:
                pace = metres(points[i], points[later]) / (times[later] - times[i]).total_seconds()
                totals["gaps_walked"] += 0.3 <= pace <= 2.5
        for v in closed:
            a, b = pd.Timestamp(v["arrival"]), pd.Timestamp(v["departure"])
            if seconds > 900 and a <= times[i - 1] and times[i] <= b:
                totals["bridged"] += 1
    totals["inferred"] += sum(1 for v in closed if "departure_observed" in v)
    # A person's diary: the truth for this log.
    if os.path.exists(name + ".diary.csv"):
        with open(name + ".diary.csv") as rows:
            stops = [tuple(pd.Timestamp(value) for value in row.strip().split(","))
                     for row in list(rows)[1:] if row.strip()]
        d = diary_totals
        for stop in stops:
            long = (stop[1] - stop[0]).total_seconds() >= 300
            by_waymark = overlaps(stop, waymark)
            by_reference = overlaps(stop, reference_stays)
            d["stops"] += 1
            d["stops_long"] += long
            d["waymark_found"] += by_waymark
            d["waymark_found_long"] += long and by_waymark
            d["reference_found"] += by_reference
            d["reference_found_long"] += long and by_reference
            if long and not by_waymark:
                diary_misses.append(f"{os.path.basename(log)} {stop[0]:%H:%M:%S}-{stop[1]:%H:%M:%S}")
        d["waymark_stays"] += len(waymark)
        d["waymark_false"] += sum(not overlaps(span, stops) for span in waymark)
        d["reference_stays"] += len(reference_stays)
        d["reference_false"] += sum(not overlaps(span, stops) for span in reference_stays)


def share(part, whole):
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "-"


t = totals
print(f"### {title}\n")
print(f"{t['logs']} logs, {t['fixes']} fixes, {t['hours']:.1f} h; reference: trackintel "
      f"{ti.__version__} sliding, 100 m, 5 min, gap 15 min\n")
print("| measure | value |")
print("|---|---:|")
print(f"| reference staypoints found by Waymark | {share(t['ref_found'], t['ref'])} |")
print(f"| of them observed 5 min or more before any gap | "
      f"{share(t['ref_observed_found'], t['ref_observed'])} |")
print(f"| Waymark stays of 5 min or more confirmed by the reference | "
      f"{share(t['waymark_confirmed'], t['waymark'])} |")
print(f"| gaps of 1-15 min | {t['gaps']} |")
print(f"| of them ending with a 15-40 m jump at walking pace | {t['gaps_walked']} |")
print(f"| fixes in staypoints with no accuracy | {t['unknown_accuracy']} |")
print(f"| fixes in staypoints claiming 5 m or better, spread wider | {t['optimistic']} |")
print(f"| fixes in staypoints reading above 0.8 m/s | "
      f"{share(t['fast_at_rest'], t['with_speed_at_rest'])} |")
print(f"| gaps over 15 min bridged by a Waymark stay | {t['bridged']} |")
print(f"| Waymark departures inferred in a gap | {t['inferred']} |")
if misses:
    print("\nReference staypoints Waymark missed: " + "; ".join(misses))
d = diary_totals
if d["stops"]:
    print("\nAgainst the person's diary (the logs that have one):\n")
    print("| | Waymark | trackintel (100 m, 5 min) |")
    print("|---|---:|---:|")
    print(f"| diary stops of 5 min or more found | {share(d['waymark_found_long'], d['stops_long'])}"
          f" | {share(d['reference_found_long'], d['stops_long'])} |")
    print(f"| all diary stops found | {share(d['waymark_found'], d['stops'])}"
          f" | {share(d['reference_found'], d['stops'])} |")
    print(f"| stays overlapping no diary stop (false) | {d['waymark_false']} of {d['waymark_stays']}"
          f" | {d['reference_false']} of {d['reference_stays']} |")
    if diary_misses:
        print("\nDiary stops of 5 min or more Waymark missed: " + "; ".join(diary_misses))

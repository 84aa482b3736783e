#!/usr/bin/env python3
"""Old against new `waymark` on malformed input to its JSON readers: the same answers, or not.

usage: Scripts/ab-readers.py OLD NEW places|record [RANDOM_CASES]

OLD and NEW are `waymark` binaries. Each case is run by both, each with a store of its own in
a temporary directory, and the answers compared:
  places  a FeatureCollection whose feature has one member set to each of a list of values
          (absent, null, booleans, numbers, strings, arrays, objects), then RANDOM_CASES
          (default 300, seeded) features with two to four such changes after a good one;
          `waymark places import`: exit status, standard error and, when imported, the export.
  record  `waymark replay` NDJSON (a TPV, an ARRIVAL, a DEPARTURE) with one member changed,
          then RANDOM_CASES mixed lines; `waymark visits record` into a store holding the
          demo places: exit status, standard error and the store's events and visits. A
          crash of OLD (a signal) is counted apart and NEW's answer printed.
Prints the differing cases (the first five) and a count; exit 1 when any differs.
"""
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ABSENT = object()
VALUES = [ABSENT, None, True, False, 0, -1, 1, 1.5, 2, 3, 10000, 10001, 100, 200, 1e5, 1e16,
          1e300, -12, 8999999999999999, "", "x", "Feature", "Point", "all", "nearest", "home",
          "TPV", "ARRIVAL", "2026-11-29T12:10:00.000Z", "2026-11-29T13:00:00Z", "bad", "a\nb",
          "x\u202e", [], [1], [1, 2], [1, 2, 3], [1, 2, None], ["1", 2], [200, 5], [1, 95],
          [True, 2], {}, {"a": 1}, {"name": "m"}, {"rule": "r"}]


def mutate(value, path, new):
    """Sets `path` (a tuple of keys) of `value` to `new`, or removes it; skips a missing parent."""
    for key in path[:-1]:
        if not isinstance(value.get(key), dict):
            return
        value = value[key]
    if new is ABSENT:
        value.pop(path[-1], None)
    else:
        value[path[-1]] = copy.deepcopy(new)


def places_cases(count):
    base = {"type": "Feature", "id": "a",
            "geometry": {"type": "Point", "coordinates": [4.8, 45.7]},
            "properties": {"name": "n", "radius": 60}}
    members = ["id", "name", "radius", "created", "exitRadius", "confirmations", "dwell", "group",
               "overlap", "category", "subtitle", "address", "town", "url", "image", "detail",
               "maximumAccuracy", "other"]
    paths = [("type",), ("geometry",), ("geometry", "type"), ("geometry", "coordinates"),
             ("id",), ("properties",)] + [("properties", name) for name in members]
    cases = []
    for path in paths:
        for value in VALUES:
            feature = copy.deepcopy(base)
            mutate(feature, path, value)
            cases.append([feature])
    rng = random.Random(37)
    for _ in range(count):
        feature = copy.deepcopy(base)
        for _ in range(rng.randrange(2, 5)):
            mutate(feature, rng.choice(paths), rng.choice(VALUES))
        cases.append([dict(base, id="first"), feature])
    cases.append(["not a feature"])
    return [json.dumps({"type": "FeatureCollection", "features": case}) for case in cases]


def record_cases(count):
    tpv = {"class": "TPV", "time": "2026-11-29T11:59:00.000Z", "mode": 3, "lat": 45.76,
           "lon": 4.83, "eph": 5.0}
    arrival = {"class": "ARRIVAL", "time": "2026-11-29T12:00:00.000Z", "place": "home",
               "name": "Home", "lat": 45.7604, "lon": 4.8359,
               "reason": {"rule": "dwell", "distance": 3.5, "accuracy": 4, "enter": 60,
                          "exit": 80, "confirmations": 3, "dwell": 30,
                          "zeta": [1, {"b": 2, "A": 1}]}}
    departure = dict(arrival, **{"class": "DEPARTURE", "time": "2026-11-29T12:30:00.000Z",
                                 "arrival": "2026-11-29T12:00:00.000Z"})

    def paths(line):
        reason = line["reason"] if isinstance(line.get("reason"), dict) else {}
        return [(key,) for key in line] + [("reason", key) for key in reason] + [("arrival",)]

    cases = []
    for template in (tpv, arrival, departure):
        for path in paths(template):
            for value in VALUES:
                line = copy.deepcopy(template)
                mutate(line, path, value)
                cases.append([tpv, arrival, line])
    rng = random.Random(37)
    for _ in range(count):
        lines = []
        for template in (tpv, arrival, departure, rng.choice((tpv, arrival, departure))):
            line = copy.deepcopy(template)
            for _ in range(rng.randrange(0, 3)):
                mutate(line, rng.choice(paths(line)), rng.choice(VALUES))
            lines.append(line)
        cases.append(lines)
    cases += [["{oops"], ["[1]"], ["   "], ['{"class":"TPV"} x']]
    return ["\n".join(l if isinstance(l, str) else json.dumps(l) for l in case) + "\n"
            for case in cases]


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[3] not in ("places", "record"):
        sys.exit(__doc__)
    old, new, kind = sys.argv[1:4]
    count = int(sys.argv[4]) if len(sys.argv) == 5 else 300
    work = tempfile.mkdtemp()
    try:
        seed = os.path.join(work, "seed.db")
        if kind == "record":
            demo = os.path.join(ROOT, "Demo", "places.geojson")
            subprocess.run([old, "places", "import", demo, "--store", seed], check=True,
                           capture_output=True)

        def run(binary, text, number, tag):
            path = os.path.join(work, f"case{number}.{'geojson' if kind == 'places' else 'ndjson'}")
            with open(path, "w") as file:
                file.write(text)
            store = os.path.join(work, f"store{number}{tag}.db")
            if kind == "places":
                command = [binary, "places", "import", path, "--store", store]
            else:
                shutil.copy(seed, store)
                command = [binary, "visits", "record", path, "--store", store]
            result = subprocess.run(command, capture_output=True, text=True)
            error = "(signal)" if result.returncode < 0 else result.stderr.replace(store, "S")
            answer = (result.returncode, error)
            if kind == "places" and result.returncode == 0:
                export = subprocess.run([binary, "places", "export", "--store", store],
                                        capture_output=True, text=True)
                answer += (export.returncode, export.stdout)
            if kind == "record":
                rows = subprocess.run(
                    ["sqlite3", store, "SELECT * FROM event; SELECT * FROM visit;"],
                    capture_output=True, text=True)
                answer += (rows.stdout,)
            return answer

        cases = places_cases(count) if kind == "places" else record_cases(count)
        differ = accepted = crashed = 0
        for number, text in enumerate(cases):
            before, after = run(old, text, number, "old"), run(new, text, number, "new")
            accepted += before[0] == 0
            if before[0] < 0:
                crashed += 1
                print(f"OLD crashed; NEW: {after[0]} {after[1].strip()}")
            elif before != after:
                differ += 1
                if differ <= 5:
                    print("DIFFERS:", text, before, after, sep="\n")
        print(f"{kind}: {len(cases)} cases, {accepted} accepted by OLD, {crashed} crashed OLD, "
              f"{differ} differ")
        sys.exit(1 if differ else 0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

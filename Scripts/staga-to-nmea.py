#!/usr/bin/env python3
"""Converts the STAGA example (a smartphone's GPS log with a person's stop/trip diary) to an NMEA
0183 log and the diary's stops, as Tests/Fixtures/tracks holds them (see the README there).

The input is `examples/data/preprocessed_example.csv` of the Stop & Go Classifier repository
(columns ts, x, y, longitude, latitude, motion_score, diary_label). Written: GGA and RMC per
sample (position and time only: the phone's log has no speed, no course and no error
estimate), times in UTC; and one line per stop of the diary (first and last sample labelled
"stop" in a run), `arrival,departure` in ISO 8601 UTC.

  Scripts/staga-to-nmea.py preprocessed_example.csv staga-phone.nmea staga-phone.diary.csv
"""
import csv
import sys
from datetime import datetime, timezone

from nmea_sentences import checksummed, degrees


def iso(when):
    return when.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def main():
    source, log_path, diary_path = sys.argv[1:4]
    rows = list(csv.DictReader(open(source, encoding="utf-8")))
    lines = [f"# converted from {source.rsplit('/', 1)[-1]} by Scripts/staga-to-nmea.py"]
    stops = []
    current = None
    for row in rows:
        when = datetime.fromisoformat(row["ts"]).astimezone(timezone.utc)
        lat, ns = degrees(float(row["latitude"]), "N", "S", 2, decimals=6)
        lon, ew = degrees(float(row["longitude"]), "E", "W", 3, decimals=6)
        clock = when.strftime("%H%M%S.00")
        date = when.strftime("%d%m%y")
        lines.append(checksummed(f"GPGGA,{clock},{lat},{ns},{lon},{ew},1,,,,M,,M,,"))
        lines.append(checksummed(f"GPRMC,{clock},A,{lat},{ns},{lon},{ew},,,{date},,,A"))
        if row["diary_label"] == "stop":
            current = [when, when] if current is None else [current[0], when]
        elif current is not None:
            stops.append(current)
            current = None
    if current is not None:
        stops.append(current)
    with open(log_path, "w", encoding="ascii") as log:
        log.write("\n".join(lines) + "\n")
    with open(diary_path, "w", encoding="ascii") as diary:
        diary.write("arrival,departure\n")
        for arrival, departure in stops:
            diary.write(f"{iso(arrival)},{iso(departure)}\n")
    print(f"{len(rows)} samples, {len(stops)} diary stops", file=sys.stderr)


if __name__ == "__main__":
    main()

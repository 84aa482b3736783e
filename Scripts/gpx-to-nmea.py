#!/usr/bin/env python3
"""Converts the track points of a GPX file to an NMEA 0183 log (GGA and RMC per point), as a
phone's log converted to NMEA looks: position, altitude and time only. Points without a time
are left out. No speed, no course and no HDOP are written, because the GPX has none: the
receiver's error is unknown, and Waymark's stay detector must learn it from the fixes.

Used once to make Tests/Fixtures/tracks (see the README there):

  Scripts/gpx-to-nmea.py track.gpx > track.nmea
"""
import re
import sys
from datetime import datetime

from nmea_sentences import checksummed, degrees


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    lines = [f"# converted from {sys.argv[1].rsplit('/', 1)[-1]} by Scripts/gpx-to-nmea.py"]
    for match in re.finditer(r"<trkpt\s+([^>]*)>(.*?)</trkpt>", text, re.S):
        attributes, body = match.group(1), match.group(2)
        latitude = float(re.search(r'lat="([^"]+)"', attributes).group(1))
        longitude = float(re.search(r'lon="([^"]+)"', attributes).group(1))
        time = re.search(r"<time>([^<]+)</time>", body)
        if time is None:
            continue
        when = datetime.fromisoformat(time.group(1).strip().replace("Z", "+00:00"))
        elevation = re.search(r"<ele>([^<]+)</ele>", body)
        altitude = f"{float(elevation.group(1)):.1f}" if elevation else ""
        clock = when.strftime("%H%M%S.00")
        date = when.strftime("%d%m%y")
        lat, ns = degrees(latitude, "N", "S", 2)
        lon, ew = degrees(longitude, "E", "W", 3)
        lines.append(checksummed(f"GPGGA,{clock},{lat},{ns},{lon},{ew},1,,,{altitude},M,,M,,"))
        lines.append(checksummed(f"GPRMC,{clock},A,{lat},{ns},{lon},{ew},,,{date},,,A"))
    print("\n".join(lines))


if __name__ == "__main__":
    main()

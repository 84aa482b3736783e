#!/usr/bin/env python3
"""Writes the test suite's inline samples of one file kind as fuzzer seeds.

    Fuzz/fixture-seeds.py <config|places|grants|monitor|waypoints|import> <output folder>

Scans Tests/**/*.swift for Swift multi-line string literals (\"\"\" ... \"\"\") and one-line raw
strings (#"..."#), and keeps those
that look like the kind: a waymark.conf ('key = value' lines), a places file
(FeatureCollection), a grants file ("grants" and "version") or a monitor's state ("entries" or
a place's state). Interpolations stay as written;
the fuzzer mutates the seeds anyway. Prints how many seeds it wrote.
"""
import pathlib
import re
import sys

kind, folder = sys.argv[1], pathlib.Path(sys.argv[2])
looks_like = {
    "config": lambda text: re.search(r"^\s*[a-z][a-z-]* = ", text, re.M) is not None
    and "FeatureCollection" not in text and "[Unit]" not in text and "[Service]" not in text,
    "places": lambda text: "FeatureCollection" in text,
    "grants": lambda text: '"grants"' in text and '"version"' in text,
    "monitor": lambda text: '"entries"' in text or '"_0"' in text or '"outside"' in text,
    "waypoints": lambda text: "setWaypoints" in text,
    "import": lambda text: any(
        word in text for word in ('"locations"', '"timelineObjects"', '"semanticSegments"',
                                  '"startTime"', "trkpt", "lat;", "lat,")),
}[kind]
count = 0
for source in sorted(pathlib.Path("Tests").rglob("*.swift")):
    code = source.read_text()
    literals = re.findall(r'"""\n(.*?)\n\s*"""', code, re.S) + re.findall(r'#"(.*?)"#', code)
    for literal in literals:
        lines = literal.split("\n")
        indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
        text = "\n".join(l[indent:] for l in lines) + "\n"
        if looks_like(text):
            (folder / f"fixture-{count}").write_text(text)
            count += 1
print(count)

#!/usr/bin/env python3
"""Writes a large GeoJSON places file for benchmarks of the places reader (`PlaceCollection`).

usage: Scripts/make-places.py COUNT > places.geojson

COUNT Point features, the same for the same COUNT (seeded): ids `p0`, `p1`, …, a name, a radius
of 40-239 m and a category each; every third an address and a town, every fifth a group, a
dwell, confirmations and an exit radius. Centres are spread over France with 7 decimals. The
text is indented as people's files are (one space a level).
"""
import json
import random
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    count = int(sys.argv[1])
    rng = random.Random(37)
    features = []
    for index in range(count):
        radius = 40 + rng.randrange(200)
        properties = {"name": f"Place {index}", "radius": radius,
                      "category": ["cafe", "shop", "work"][index % 3]}
        if index % 3 == 0:
            properties.update(address=f"{index} Rue Mercière", town="Lyon")
        if index % 5 == 0:
            properties.update(group=f"g{index % 50}", dwell=30, confirmations=2,
                              exitRadius=radius + 50)
        coordinates = [round(-2 + rng.random() * 10, 7), round(43 + rng.random() * 7, 7)]
        features.append({"type": "Feature", "id": f"p{index}",
                         "geometry": {"type": "Point", "coordinates": coordinates},
                         "properties": properties})
    collection = {"type": "FeatureCollection", "features": features}
    print(json.dumps(collection, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()

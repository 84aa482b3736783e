#!/usr/bin/env python3
"""A/B of two `waymark` binaries on one log, in one invocation, against gpsdecode.

usage: Scripts/ab-replay.py OLD NEW LOG PLACES [ROUNDS]

OLD and NEW are `waymark` binaries, or the build directories that hold them.

Each round runs, interleaved: `gpsdecode -j < LOG` (the reference), then for OLD and NEW (OLD
first in even rounds, NEW first in odd ones) `waymark replay LOG --fixes` and
`waymark replay LOG --places PLACES`, output to /dev/null.
CPU is the child's user + system time (wait4). Before the rounds, OLD's and NEW's outputs are
compared byte for byte (an A/B of different outputs means nothing). Prints the best and the
median CPU of each run and NEW/OLD ratios (of the best, and the median of the rounds' ratios).
"""
import os
import statistics
import subprocess
import sys


def cpu(command, stdin=None):
    with open(stdin or os.devnull, "rb") as source, open(os.devnull, "wb") as sink:
        process = subprocess.Popen(command, stdin=source, stdout=sink, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    old, new, log, places = sys.argv[1:5]
    old, new = [os.path.join(p, "waymark") if os.path.isdir(p) else p for p in (old, new)]
    rounds = int(sys.argv[5]) if len(sys.argv) == 6 else 7
    runs = {
        "fixes": lambda binary: [binary, "replay", log, "--fixes"],
        "places": lambda binary: [binary, "replay", log, "--places", places],
    }
    for name, command in runs.items():
        outputs = [subprocess.run(command(b), capture_output=True).stdout for b in (old, new)]
        if outputs[0] != outputs[1]:
            sys.exit(f"--{name}: old and new print different outputs")
        print(f"--{name}: old and new outputs identical ({len(outputs[0])} bytes)")
    times = {key: [] for key in ["gpsdecode", "old fixes", "old places", "new fixes", "new places"]}
    for number in range(rounds):
        times["gpsdecode"].append(cpu(["gpsdecode", "-j"], stdin=log))
        # Old first in even rounds, new first in odd ones: a place in the round (after the
        # reference's seconds of CPU, or after the other binary) weighs on both alike.
        sides = [("old", old), ("new", new)]
        for side, binary in sides if number % 2 == 0 else sides[::-1]:
            for name, command in runs.items():
                times[f"{side} {name}"].append(cpu(command(binary)))
    print("| run | CPU s best | CPU s median |")
    print("|---|---|---|")
    for key, values in times.items():
        label = "gpsdecode -j < log (reference)" if key == "gpsdecode" else f"{key.split()[0]} replay --{key.split()[1]}"
        print(f"| {label} | {min(values):.3f} | {statistics.median(values):.3f} |")
    for name in runs:
        olds, news = times[f"old {name}"], times[f"new {name}"]
        ratios = [n / o for o, n in zip(olds, news)]
        print(
            f"new/old --{name}: {min(news) / min(olds):.2f} (best), "
            f"{statistics.median(ratios):.2f} (median of rounds; range "
            f"{min(ratios):.2f}-{max(ratios):.2f})")
    gps = min(times["gpsdecode"])
    for key in ["new fixes", "new places"]:
        print(f"gpsdecode/{key}: {gps / min(times[key]):.1f}x (best)")


main()

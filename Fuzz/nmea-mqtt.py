#!/usr/bin/env python3
"""Fuzzes `waymark replay --mqtt`: NMEA logs whose sentences carry hostile fields (with valid
checksums, so that they reach the decoder), replayed with places and a store, publishing every
fix as an OwnTracks location to a real mosquitto.

    Fuzz/nmea-mqtt.py --waymark BIN --cases N [--seed S] [--scratch DIR]

Each case is one sentence; the cases go in logs of 100,000 sentences, each replayed once. The
oracle, for each replay: it ends by itself with 0, 65 or 69 (never a signal: a trap), says why
on standard error when it is not 0, and its store passes `PRAGMA integrity_check`. Prints "Done
<n> runs" and exits 0, or names the failure and exits 1.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from live_daemon import integrity_problem, start_mosquitto, stop

parser = argparse.ArgumentParser()
parser.add_argument("--waymark", required=True)
parser.add_argument("--cases", type=int, default=1_000_000)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--scratch")
options = parser.parse_args()
rng = random.Random(options.seed)

NUMBERS = ["999999999999999999", "1e300", "-1e300", "9e9999", "0", "-0", "00000000000000000001",
           "nan", "inf", "1.", ".5", "-", "+", "12345678901234567890.123", "4.9e-324", "99.9",
           "360", "-1", "65535", "999999"]


def checksum(body):
    value = 0
    for byte in body.encode("latin-1"):
        value ^= byte
    return f"{value:02X}"


def sentence(body):
    return f"${body}*{checksum(body)}"


def mutate(line):
    """The sentence with one to four of its fields replaced (a hostile number, an empty field,
    junk), its checksum recomputed; sometimes a broken checksum or raw junk instead."""
    if not line.startswith("$") or "*" not in line:
        return line
    body = line[1:line.index("*")]
    fields = body.split(",")
    choice = rng.random()
    if choice < 0.35:
        return line
    if choice < 0.90:
        for _ in range(rng.randint(1, 4)):
            index = rng.randrange(1, len(fields)) if len(fields) > 1 else 0
            fields[index] = rng.choice(NUMBERS + ["", "A", "V", "N", "S", "E", "W", "x" * rng.randint(1, 90)])
        return sentence(",".join(fields))
    if choice < 0.95:
        return line[:-2] + "00"
    return "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randint(1, 120)))


def main():
    scratch = options.scratch or tempfile.mkdtemp(prefix="waymark-nmea-mqtt-fuzz-")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    seed_lines = [line.rstrip("\r\n") for line in open(os.path.join(root, "Demo", "drive.nmea"),
                                                         encoding="latin-1")
                  if line.startswith("$")]
    places = os.path.join(root, "Demo", "places.geojson")
    broker, port = start_mosquitto(scratch)
    problems = []
    done = 0
    started = time.time()
    statuses = {}
    try:
        while done < options.cases and not problems:
            count = min(100_000, options.cases - done)
            log = os.path.join(scratch, "fuzz.nmea")
            with open(log, "w", encoding="latin-1") as file:
                for index in range(count):
                    file.write(mutate(seed_lines[(done + index) % len(seed_lines)]) + "\r\n")
            store = os.path.join(scratch, f"replay-{done}.db")
            run = subprocess.run(
                [options.waymark, "replay", log, "--places", places, "--store", store, "--mqtt",
                 f"127.0.0.1:{port}", "--mqtt-interval", "0", "--mqtt-wait", "60",
                 "--mqtt-topic", "fuzz/replay"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
            statuses[run.returncode] = statuses.get(run.returncode, 0) + 1
            if run.returncode not in (0, 65, 69):
                problems.append(f"replay exited {run.returncode} after cases {done}..{done + count}: "
                                f"{run.stderr.strip()[-300:]}")
                shutil.copy(log, os.path.join(scratch, "failing.nmea"))
            elif run.returncode != 0 and not run.stderr.strip():
                problems.append(f"replay exited {run.returncode} without saying why")
            problem = integrity_problem(store) if os.path.exists(store) else None
            if problem:
                problems.append(problem)
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(store + suffix) and not problems:
                    os.unlink(store + suffix)
            done += count
    finally:
        stop(broker)
    seconds = time.time() - started
    print(f"Done {done} runs in {seconds:.0f} s ({done / max(seconds, 1):.0f}/s); "
          f"exit statuses {dict(sorted(statuses.items()))}")
    if problems:
        print("FAILED: " + "; ".join(problems))
        print(f"scratch: {scratch}")
        return 1
    if not options.scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


sys.exit(main())

#!/usr/bin/env python3
"""Fuzzes waymarkd's whole gpsd session: a gpsd impostor on a loopback port sends mutated gpsd
JSON (TPV, SKY, DEVICE, WATCH, VERSION, ERROR, junk) to the real waymarkd, which reads it through
the real libgps, runs the pipeline (places, visits, track) and publishes to a real mosquitto when
one is installed (the OwnTracks conversion of every fix).

    Fuzz/gpsd-session.py --waymarkd BIN --waymark BIN --cases N [--seed S] [--scratch DIR]

Each case is one line sent. Every 100,000 cases the impostor drops the connection (the daemon
reconnects). The oracle, at the end: the daemon is still running and exits 0 on SIGTERM, its
store passes `PRAGMA integrity_check`, and no file owned by the daemon's user was written
outside its state directory where that user could write at all (as root it runs as user nobody,
the state directory its own). Prints
"Done <n> runs" (as libFuzzer does) and exits 0, or names the failure and exits 1.
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from live_daemon import Daemon, start_mosquitto, stop

parser = argparse.ArgumentParser()
parser.add_argument("--waymarkd", required=True)
parser.add_argument("--waymark", required=True)
parser.add_argument("--cases", type=int, default=1_000_000)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--scratch")
options = parser.parse_args()
rng = random.Random(options.seed)

EXTREMES = ["1e300", "-1e300", "1e19", "-1e19", "9223372036854775807", "-9223372036854775808",
            "18446744073709551616", "0", "-0", "1e-320", "4.9e-324", "123456789012345678901234567890",
            "0.5", "-1", "999999999999", "3.4e38", "nan", "inf", "-inf", "null", "true", '"x"',
            "[]", "{}", '"1e300"', "1E+400"]
TIMES = ["2026-12-05T10:00:00.000Z", "2079-06-01T12:00:00.000Z", "1970-01-01T00:00:00Z",
         "0000-00-00T00:00:00Z", "9999-12-31T23:59:60.999Z", "2026-12-05T10:00:00." + "9" * 40 + "Z",
         "2026-13-45T25:61:61Z", "", "garbage", "2026-12-05T10:00:00.000+99:99",
         "-2026-12-05T10:00:00Z", "2026-12-05T10:00:00.000Z" * 8]
CLASSES = ["TPV", "SKY", "DEVICE", "DEVICES", "WATCH", "VERSION", "ERROR", "TOFF", "PPS", "GST",
           "ATT", "POLL", "", "TPVX", "tpv"]
TPV_KEYS = ["lat", "lon", "alt", "altHAE", "altMSL", "speed", "track", "climb", "epx", "epy",
            "epv", "eps", "epd", "epc", "ept", "eph", "sep", "mode", "status", "leapseconds",
            "magtrack", "geoidSep", "ecefx", "ecefvx", "velN", "velE", "velD", "dgpsAge"]


def random_time():
    """A valid ISO 8601 time with one or two of its parts out of range, or its fraction of any
    length or form."""
    parts = {"year": "2026", "month": "12", "day": "05", "hour": "10", "minute": "00",
             "second": "00", "fraction": ".000", "zone": "Z"}
    variants = {
        "year": ["1970", "2079", "9999", "30000", "0000", "-001", "99999999"],
        "month": ["01", "00", "13", "99"], "day": ["00", "31", "32"],
        "hour": ["00", "23", "24", "99"], "minute": ["59", "60", "99"],
        "second": ["59", "60", "61", "99"],
        "fraction": ["", ".", ".5", ".9e300", ".1e-300", ".-3", ".nan", ".inf",
                     "." + "9" * rng.randint(10, 400),
                     "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 60)))],
        "zone": ["", "+00:00", "+99:99", "z", "ZZ"],
    }
    for key in rng.sample(list(variants), rng.choice([1, 1, 1, 2])):
        parts[key] = rng.choice(variants[key])
    return ("{year}-{month}-{day}T{hour}:{minute}:{second}{fraction}{zone}").format(**parts)


def base_fix(index):
    """A valid TPV near the places, moving east: the seed every mutation starts from."""
    seconds = index % 86_400
    return {"class": "TPV", "device": "/dev/fuzz", "mode": 3,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_796_000_000 + seconds)),
            "lat": 52.52 + rng.uniform(-0.01, 0.01), "lon": 13.405 + rng.uniform(-0.01, 0.01),
            "altMSL": 40.0, "speed": 3.0, "track": 90.0, "epx": 3.0, "epy": 3.0, "epv": 5.0}


def mutate(index):
    """One line: a valid fix a third of the time, else a fix or another class with hostile
    values, or raw junk."""
    choice = rng.random()
    fix = base_fix(index)
    if choice < 0.33:
        return json.dumps(fix, separators=(",", ":"))
    if choice < 0.80:
        if rng.random() < 0.5:
            fix["time"] = random_time()
        text = json.dumps(fix, separators=(",", ":"))
        for _ in range(rng.randint(0, 3)):
            key = rng.choice(TPV_KEYS + ["time", "class", "device"])
            if key == "time":
                value = json.dumps(rng.choice(TIMES) if rng.random() < 0.3 else random_time())
            elif key == "class":
                value = json.dumps(rng.choice(CLASSES))
            elif key == "device":
                value = json.dumps(rng.choice(["", "/dev/" + "x" * rng.randint(1, 300), "\u0000\n"]))
            else:
                value = rng.choice(EXTREMES)
            if f'"{key}":' in text:
                start = text.index(f'"{key}":') + len(key) + 3
                end = start
                depth = 0
                while end < len(text) and (depth or text[end] not in ",}"):
                    depth += text[end] in "[{"
                    depth -= text[end] in "]}"
                    end += 1
                text = text[:start] + value + text[end:]
            else:
                text = text[:-1] + f',"{key}":{value}' + "}"
        return text
    if choice < 0.92:
        klass = rng.choice(CLASSES)
        body = {"class": klass}
        for _ in range(rng.randint(0, 6)):
            body[rng.choice(TPV_KEYS + ["satellites", "devices", "release", "proto_major",
                                        "path", "activated", "enable", "message"])] = \
                json.loads(rng.choice([e for e in EXTREMES if e not in ("nan", "inf", "-inf")]))
        if klass == "SKY" and rng.random() < 0.5:
            body["satellites"] = [{"PRN": rng.randint(-5, 500), "el": rng.uniform(-1e6, 1e6),
                                   "az": rng.uniform(-1e6, 1e6), "ss": rng.choice([0, 1e300]),
                                   "used": rng.choice([True, False, 7])}
                                  for _ in range(rng.randint(0, 80))]
        return json.dumps(body, separators=(",", ":"))
    # Raw junk: flipped bytes of a fix, truncation, a very long line, control bytes.
    data = bytearray(json.dumps(fix, separators=(",", ":")).encode())
    kind = rng.random()
    if kind < 0.4:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(1, 256)
    elif kind < 0.7:
        data = data[:rng.randrange(len(data))]
    elif kind < 0.85:
        data = bytearray(b'{"class":"TPV","device":"' + b"A" * rng.randint(1000, 20000) + b'"}')
    else:
        data = bytearray(rng.randrange(1, 256) for _ in range(rng.randint(1, 200)))
    return data.replace(b"\n", b" ").decode("latin-1")


class Impostor:
    """gpsd's side: VERSION on connect, DEVICES and WATCH after ?WATCH, then the cases."""

    def __init__(self, cases):
        self.cases = cases
        self.sent = 0
        self.done = threading.Event()
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(4)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        version = b'{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}\n'
        while self.sent < self.cases:
            client, _ = self.server.accept()
            try:
                client.sendall(version)
                received = b""
                while b"?WATCH" not in received:
                    chunk = client.recv(4096)
                    if not chunk:
                        raise ConnectionError
                    received += chunk
                client.sendall(b'{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/fuzz",'
                               b'"driver":"NMEA0183","activated":"2026-12-05T10:00:00.000Z"}]}\n'
                               b'{"class":"WATCH","enable":true,"json":true}\n')
                batch = []
                while self.sent < self.cases:
                    batch.append((mutate(self.sent) + "\n").encode("latin-1"))
                    self.sent += 1
                    if len(batch) == 256 or self.sent == self.cases:
                        client.sendall(b"".join(batch))
                        batch = []
                    if self.sent % 100_000 == 0:
                        break  # a reconnection every 100,000 cases
                # Everything sent has been read by the daemon before the connection goes.
                while True:
                    pending = int.from_bytes(
                        __import__("fcntl").ioctl(client, 0x5411, b"\0\0\0\0"), "little")
                    if pending == 0:
                        break
                    time.sleep(0.01)
            except (ConnectionError, OSError):
                pass
            # Sent and acknowledged is not yet read: give libgps a moment to read the rest.
            time.sleep(1 if self.sent >= self.cases else 0.3)
            client.close()
        self.done.set()


def main():
    scratch = options.scratch or tempfile.mkdtemp(prefix="waymark-session-fuzz-")
    impostor = Impostor(options.cases)
    config = [f"gpsd = 127.0.0.1:{impostor.port}", "save-interval = 5", "fix-time-tolerance = 86400"]
    broker = None
    if os.path.exists("/usr/sbin/mosquitto"):
        broker, broker_port = start_mosquitto(scratch)
        config += [f"mqtt = 127.0.0.1:{broker_port}", "mqtt-interval = 60", "mqtt-outbox-max = 1000"]
    daemon = Daemon(options.waymarkd, options.waymark, scratch, config)
    for index in range(5):
        subprocess.run([options.waymark, "places", "add", "--name", f"Place {index}", "--lat",
                        str(52.52 + 0.002 * index), "--lon", "13.405", "--radius", "100",
                        "--store", daemon.store], check=True, stdout=subprocess.DEVNULL)
    started = time.time()
    daemon.start()
    problems = []
    while not impostor.done.wait(1):
        if daemon.process.poll() is not None:
            problems.append(f"waymarkd exited {daemon.process.returncode} after {impostor.sent} cases")
            break
    daemon.finish(problems)
    if broker:
        stop(broker)
    seconds = time.time() - started
    print(f"Done {impostor.sent} runs in {seconds:.0f} s ({impostor.sent / max(seconds, 1):.0f}/s); "
          f"mosquitto {'on' if broker else 'absent'}; as nobody: {daemon.as_nobody}")
    if problems:
        print("FAILED: " + "; ".join(problems))
        print(f"daemon log: {daemon.log_path}")
        return 1
    if not options.scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


sys.exit(main())

#!/usr/bin/env python3
"""Fuzzes waymarkd's MQTT commands end to end: mutated `setWaypoints` commands (and other
payloads) published through a real mosquitto to the real daemon's `<topic>/cmd`.

    Fuzz/mqtt-commands.py --waymarkd BIN --waymark BIN --cases N [--seed S] [--scratch DIR]

Each case is one message published (QoS 0, to a broker that queues without limit). Every 500
cases a sentinel command (a valid waypoint whose name counts up) is published and the fuzzer
waits until the daemon's retained waypoints message carries it: every case before it was taken.
The oracle, at the end: the daemon is still running and exits 0 on SIGTERM; its store passes
`PRAGMA integrity_check`; every stored place is within the limits a command may bring (a radius
in (0, 100 km], a name without control characters, at most 10,000 places); and no file owned by
the daemon's user was written outside its state directory (as root it runs as user nobody).
Prints "Done <n> runs" and exits 0, or names the failure and exits 1.
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
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests",
                                "Fixtures", "hostile"))
from mqtt_wire import packet, read_packet, string  # noqa: E402
from live_daemon import Daemon, free_port, start_mosquitto, stop  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--waymarkd", required=True)
parser.add_argument("--waymark", required=True)
parser.add_argument("--cases", type=int, default=1_000_000)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--scratch")
options = parser.parse_args()
rng = random.Random(options.seed)
TOPIC = "fuzz/dev"

NUMBERS = ["1e300", "-1e300", "1e19", "-1e19", "0", "-0", "1e-320", "100000", "100000.0001",
           "90", "-90.0000001", "180.5", "-181", "9223372036854775807", "NaN", "Infinity", "null",
           "true", '"50"', "[]", "{}", "50", "12.5", "1E+400"]
TEXTS = ["", "Home", "x" * 201, "x" * 200, "a\nb", "a\u0000b", "\u202eevil", "\u2028", "é" * 100,
         "=cmd()", "+1", "@sum", "-2", "'quoted'", '"', "\\", "\ud800", None, 7, ["a"]]


class Client:
    """A minimal MQTT 3.1.1 client: CONNECT, PUBLISH at QoS 0, SUBSCRIBE, reading PUBLISH."""

    def __init__(self, port, client_id):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.sendall(packet(0x10, string("MQTT") + b"\x04\x02\x00\x00" + string(client_id)))
        kind, _ = self.read()
        assert kind == 2, "no CONNACK"

    def publish(self, topic, payload):
        self.socket.sendall(packet(0x30, string(topic) + payload))

    def subscribe(self, topic):
        self.socket.sendall(packet(0x82, b"\x00\x01" + string(topic) + b"\x00"))

    def read(self, timeout=60):
        self.socket.settimeout(timeout)
        return read_packet(self.socket)

    def next_message(self, timeout):
        while True:
            kind, body = self.read(timeout)
            if kind == 3:
                size = int.from_bytes(body[:2], "big")
                return body[2:2 + size].decode(), body[2 + size:]


def waypoint(index):
    return {"_type": "waypoint", "desc": f"W{index}", "lat": 45 + rng.uniform(-1, 1),
            "lon": 4.8 + rng.uniform(-1, 1), "rad": rng.choice([25, 50, 100, 500]),
            "rid": f"w{rng.randrange(200)}", "tst": 1_796_000_000}


# Lists past the 1,000 waypoints a command may carry, made once (they are large).
BIG = [json.dumps([{"_type": "waypoint", "desc": f"B{i}", "lat": 45, "lon": 4.8, "rad": 50,
                    "rid": f"b{i}"} for i in range(count)]) for count in (1001, 1500)]


def command(case):
    """A valid command a twentieth of the time, else a mutated one, another JSON, or junk."""
    body = {"_type": "cmd", "action": "setWaypoints",
            "waypoints": {"_type": "waypoints", "waypoints": [waypoint(case) for _ in range(rng.randint(1, 3))]}}
    choice = rng.random()
    if choice < 0.05:
        return json.dumps(body).encode()
    if choice < 0.75:
        text = json.dumps(body)
        for _ in range(rng.randint(1, 4)):
            target = rng.choice(["rad", "lat", "lon", "desc", "rid", "tst", "_type", "action",
                                 "waypoints"])
            if target in ("desc", "rid", "_type", "action"):
                value = json.dumps(rng.choice(TEXTS))
            elif target == "waypoints":
                value = rng.choice(["null", "[]", "{}", '"x"'] + BIG)
            else:
                value = rng.choice(NUMBERS)
            key = f'"{target}": '
            if key in text:
                start = text.index(key) + len(key)
                end, depth = start, 0
                while end < len(text) and (depth or text[end] not in ",}"):
                    depth += text[end] in "[{"
                    depth -= text[end] in "]}"
                    end += 1
                text = text[:start] + value + text[end:]
        return text.encode("utf-8", "surrogatepass")
    if choice < 0.9:
        return json.dumps(rng.choice([
            {"_type": "cmd", "action": rng.choice(["reportLocation", "dump", "setConfiguration", "", None])},
            {"_type": "waypoints", "waypoints": []}, [1, 2, 3], "setWaypoints", None,
            {"_type": "cmd", "action": "setWaypoints", "waypoints": {"_type": "waypoints", "waypoints": {"a": 1}}},
        ])).encode()
    data = bytearray(json.dumps(body).encode())
    if rng.random() < 0.5:
        for _ in range(rng.randint(1, 10)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    else:
        data = data[:rng.randrange(len(data))]
    return bytes(data)


def main():
    scratch = options.scratch or tempfile.mkdtemp(prefix="waymark-mqtt-fuzz-")
    broker, broker_port = start_mosquitto(scratch)
    daemon = Daemon(options.waymarkd, options.waymark, scratch, [
        f"gpsd = 127.0.0.1:{free_port()}", f"mqtt = 127.0.0.1:{broker_port}",
        f"mqtt-topic = {TOPIC}", "mqtt-interval = 3600"])
    started = time.time()
    daemon.start()
    problems = []
    sent = 0
    try:
        deadline = time.time() + 30
        while "MQTT: connected" not in open(daemon.log_path).read():
            if time.time() > deadline or daemon.process.poll() is not None:
                raise RuntimeError("waymarkd never connected to mosquitto")
            time.sleep(0.1)
        publisher = Client(broker_port, "fuzz-publisher")
        watcher = Client(broker_port, "fuzz-watcher")
        watcher.subscribe(TOPIC + "/waypoints")
        sentinel = 0
        while sent < options.cases:
            publisher.publish(TOPIC + "/cmd", command(sent))
            sent += 1
            if sent % 500 == 0 or sent == options.cases:
                sentinel += 1
                mark = {"_type": "cmd", "action": "setWaypoints", "waypoints": {
                    "_type": "waypoints", "waypoints": [{"_type": "waypoint", "desc": f"S{sentinel}",
                                                         "lat": 1, "lon": 2, "rad": 50, "rid": "sentinel"}]}}
                publisher.publish(TOPIC + "/cmd", json.dumps(mark).encode())
                while True:
                    topic, payload = watcher.next_message(120)
                    if f'"S{sentinel}"' in payload.decode("utf-8", "replace"):
                        break
                if daemon.process.poll() is not None:
                    raise RuntimeError(f"waymarkd exited {daemon.process.returncode} after {sent} cases")
    except (RuntimeError, ConnectionError, OSError, AssertionError) as error:
        problems.append(f"{error} (after {sent} cases)")
    daemon.finish(problems)
    stop(broker)
    rows = subprocess.run(
        ["sqlite3", "-json", daemon.store, "SELECT id, name, radius FROM place"], capture_output=True, text=True)
    places = json.loads(rows.stdout or "[]")
    if len(places) > 10_000:
        problems.append(f"{len(places)} places stored")
    for place in places:
        radius = place.get("radius")
        name = place.get("name") or ""
        if not isinstance(radius, (int, float)) or not 0 < radius <= 100_000:
            problems.append(f"place {place.get('id')!r} has radius {radius!r}")
            break
        if any(ord(c) < 32 or ord(c) == 127 for c in name) or len(name.encode()) > 200:
            problems.append(f"place {place.get('id')!r} has name {name!r}")
            break
    seconds = time.time() - started
    print(f"Done {sent} runs in {seconds:.0f} s ({sent / max(seconds, 1):.0f}/s); "
          f"{len(places)} places stored; as nobody: {daemon.as_nobody}")
    if problems:
        print("FAILED: " + "; ".join(problems))
        print(f"daemon log: {daemon.log_path}")
        return 1
    if not options.scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


sys.exit(main())

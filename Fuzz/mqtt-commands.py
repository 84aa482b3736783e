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
    state = os.path.join(scratch, "state")
    os.makedirs(state, exist_ok=True)
    store = os.path.join(state, "waymark.db")
    subprocess.run([options.waymark, "auth", "grant", "waymarkd", "always", "--store", store],
                   check=True, stdout=subprocess.DEVNULL)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    broker_port = probe.getsockname()[1]
    gpsd_probe = socket.socket()
    gpsd_probe.bind(("127.0.0.1", 0))
    gpsd_port = gpsd_probe.getsockname()[1]
    probe.close()
    gpsd_probe.close()
    with open(os.path.join(scratch, "mosquitto.conf"), "w") as file:
        file.write(f"user root\nlistener {broker_port} 127.0.0.1\nallow_anonymous true\n"
                   "max_queued_messages 0\nmessage_size_limit 0\n")
    broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", os.path.join(scratch, "mosquitto.conf")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    with open(os.path.join(scratch, "waymark.conf"), "w") as file:
        file.write(f"gpsd = 127.0.0.1:{gpsd_port}\nmqtt = 127.0.0.1:{broker_port}\n"
                   f"mqtt-topic = {TOPIC}\nmqtt-interval = 3600\n")
    command_line = [options.waymarkd, "--config", os.path.join(scratch, "waymark.conf")]
    as_nobody = os.geteuid() == 0 and shutil.which("setpriv")
    if as_nobody:
        for root, directories, files in os.walk(scratch):
            for name in directories + files:
                os.chown(os.path.join(root, name), 65534, 65534)
        os.chown(scratch, 65534, 65534)
        command_line = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command_line
    marker = os.path.join(tempfile.gettempdir(), f"waymark-mqtt-fuzz-marker-{os.getpid()}")
    open(marker, "w").close()
    started = time.time()
    log = open(os.path.join(scratch, "waymarkd.log"), "w")
    daemon = subprocess.Popen(command_line, env={"PATH": "/usr/bin:/bin", "STATE_DIRECTORY": state},
                              stdout=log, stderr=log)
    problems = []
    sent = 0
    try:
        deadline = time.time() + 30
        while "MQTT: connected" not in open(os.path.join(scratch, "waymarkd.log")).read():
            if time.time() > deadline or daemon.poll() is not None:
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
                if daemon.poll() is not None:
                    raise RuntimeError(f"waymarkd exited {daemon.returncode} after {sent} cases")
    except (RuntimeError, ConnectionError, OSError, AssertionError) as error:
        problems.append(f"{error} (after {sent} cases)")
    if daemon.poll() is None:
        daemon.terminate()
        try:
            status = daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            status = "hung on SIGTERM"
        if status != 0:
            problems.append(f"waymarkd exited {status} on SIGTERM")
    elif not problems:
        problems.append(f"waymarkd exited {daemon.returncode}")
    broker.terminate()
    broker.wait()
    check = subprocess.run(["sqlite3", store, "PRAGMA integrity_check"], capture_output=True, text=True)
    if check.stdout.strip() != "ok":
        problems.append(f"integrity_check: {check.stdout.strip()[:200]} {check.stderr.strip()[:200]}")
    rows = subprocess.run(
        ["sqlite3", "-json", store, "SELECT id, name, radius FROM place"], capture_output=True, text=True)
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
    if as_nobody:
        places_to_search = [path for path in ("/tmp", "/var/tmp", "/dev/shm", "/run", "/var/lib", "/etc",
                                              "/home", "/root") if os.path.isdir(path)]
        found = subprocess.run(
            ["find"] + places_to_search + ["-xdev", "-user", "65534", "-newer", marker, "-not",
                                           "-path", scratch + "*"], capture_output=True, text=True)
        written = [line for line in found.stdout.splitlines() if line]
        if written:
            problems.append(f"written outside the state directory: {written[:5]}")
    os.unlink(marker)
    seconds = time.time() - started
    print(f"Done {sent} runs in {seconds:.0f} s ({sent / max(seconds, 1):.0f}/s); "
          f"{len(places)} places stored; as nobody: {bool(as_nobody)}")
    if problems:
        print("FAILED: " + "; ".join(problems))
        print(f"daemon log: {os.path.join(scratch, 'waymarkd.log')}")
        return 1
    if not options.scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


sys.exit(main())

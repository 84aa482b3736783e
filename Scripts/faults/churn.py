#!/usr/bin/env python3
"""The load stage of Scripts/faults.sh: socket clients churning while a 10 Hz drive runs.

  churn.py --waymarkd <path> --log <10 Hz NMEA> --store <template db> --scratch <dir>
           --clients <n> [--watchers <n>] [--nofile <n>] [--socket-clients <n>]

Two phases in one invocation, each on a fresh copy of the store with a fresh gpsd and waymarkd:
"quiet" (only the steady watchers) and "churn" (the same plus <n> clients connecting and
disconnecting all the time; every other one sends WATCH and reads what it gets, the rest only
connect, read the greeting and leave, after 0.2-2 s). This script is the receiver: it writes
the log's epochs into a pseudo-terminal that gpsd reads, at the log's own 10 Hz, and notes the
CLOCK_MONOTONIC instant of each write. The steady watchers (WATCH with events) note the instant
each line arrives. A place event's delay is its arrival at a watcher minus the write of the
epoch whose TPV came just before it on that watcher (the fix that confirmed it). waymarkd runs
with a soft RLIMIT_NOFILE of --nofile (1024: systemd's default for a service) and
socket-clients = --socket-clients. A client the daemon refuses tries again 0.2 s later.

Prints one JSON object: per phase the delays (median, p99 in ms), the events, the anonymous memory, and for
the churn phase the connects, connects per second, the clients refused and the watching churn
clients that got no TPV though they stayed a second or more (starved).
"""
import argparse
import json
import os
import random
import resource
import selectors
import shutil
import socket
import subprocess
import sys
import threading
import time
import tty


def epochs_of(path):
    """The log's epochs: (time of day "hhmmss.sss", bytes), grouped by the time field."""
    epochs, current, key = [], [], None
    for line in open(path, "rb"):
        if not line.startswith(b"$"):
            continue
        fields = line.split(b",")
        stamp = fields[1].decode() if fields[0][3:] in (b"GGA", b"RMC", b"GST") else None
        if stamp and stamp != key and current:
            epochs.append((key, b"".join(current)))
            current = []
        if stamp:
            key = stamp
        current.append(line.rstrip(b"\r\n") + b"\r\n")
    if current:
        epochs.append((key, b"".join(current)))
    return epochs


def tpv_key(line):
    """"hhmmss.sss" of a TPV's or event's "time" member."""
    start = line.find(b'"time":"')
    if start < 0:
        return None
    text = line[start + 8 : start + 8 + 24].decode()  # 2026-11-29T08:00:00.000Z
    return text[11:13] + text[14:16] + text[17:23]


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def anon_kb(pid):
    """The daemon's anonymous resident memory (where a leak shows; its code pages come and go:
    it gives back the code it has not run for a save interval)."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def connect(path):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    client.setblocking(False)
    return client


class Watchers:
    """The steady watchers, read by one thread: every line with its arrival instant."""

    def __init__(self, path, count):
        self.sockets = []
        for _ in range(count):
            client = connect(path)
            client.sendall(b'{"class":"WATCH","enable":true,"events":true}\n')
            self.sockets.append(client)
        self.lines = [[] for _ in self.sockets]
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        selector = selectors.DefaultSelector()
        buffers = [b"" for _ in self.sockets]
        for index, client in enumerate(self.sockets):
            selector.register(client, selectors.EVENT_READ, index)
        while not self.stop:
            for key, _ in selector.select(0.2):
                now = time.monotonic_ns()
                index = key.data
                try:
                    data = key.fileobj.recv(65536)
                except BlockingIOError:
                    continue
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                buffers[index] += data
                *complete, buffers[index] = buffers[index].split(b"\n")
                self.lines[index].extend((now, line) for line in complete)

    def close(self):
        self.stop = True
        self.thread.join()
        for client in self.sockets:
            client.close()


class Churn:
    """`count` clients connecting and disconnecting until stopped, one thread."""

    def __init__(self, path, count):
        self.path, self.count = path, count
        self.connects = self.refused = self.errors = self.starved = self.watched = 0
        self.stop = False
        # The drive's first and last write (CLOCK_MONOTONIC seconds): starvation is judged only
        # for clients that lived wholly between them.
        self.drive = (float("inf"), float("inf"))
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.started = time.monotonic()
        self.thread.start()

    def run(self):
        selector = selectors.DefaultSelector()
        slots = {}
        # A refused client tries again 0.2 s later (as a client with a backoff would).
        retries = []

        def open_one():
            try:
                client = connect(self.path)
            except OSError:
                self.errors += 1
                return
            self.connects += 1
            watching = random.random() < 0.5
            if watching:
                try:
                    client.sendall(b'{"class":"WATCH","enable":true}\n')
                except OSError:  # closed by the daemon at once: refused
                    self.refused += 1
                    retries.append(time.monotonic() + 0.2)
                    client.close()
                    return
            state = {
                "opened": time.monotonic(),
                "until": time.monotonic() + random.uniform(0.2, 2.0),
                "watching": watching,
                "tpvs": 0,
                "greeted": False,
            }
            slots[client] = state
            selector.register(client, selectors.EVENT_READ, state)

        def close_one(client, state, by_daemon):
            selector.unregister(client)
            client.close()
            del slots[client]
            if by_daemon and not state["greeted"]:
                self.refused += 1
                retries.append(time.monotonic() + 0.2)
            if state["watching"] and not by_daemon:
                self.watched += 1
                first, last = self.drive
                now = time.monotonic()
                if state["tpvs"] == 0 and now - state["opened"] >= 1.0 \
                   and first <= state["opened"] and now <= last:
                    self.starved += 1

        for _ in range(self.count):
            open_one()
        while not self.stop:
            for key, _ in selector.select(0.05):
                state = key.data
                try:
                    data = key.fileobj.recv(65536)
                except (BlockingIOError, ConnectionResetError):
                    data = None if key.fileobj in slots else b""
                if data is None:
                    continue
                if not data:
                    close_one(key.fileobj, state, by_daemon=True)
                    continue
                if b'"VERSION"' in data:
                    state["greeted"] = True
                state["tpvs"] += data.count(b'"TPV"')
            now = time.monotonic()
            for client, state in list(slots.items()):
                if now >= state["until"]:
                    close_one(client, state, by_daemon=False)
            retries[:] = [at for at in retries if at > now]
            while len(slots) + len(retries) < self.count and not self.stop:
                open_one()
        for client, state in list(slots.items()):
            close_one(client, state, by_daemon=False)
        self.seconds = time.monotonic() - self.started

    def close(self):
        self.stop = True
        self.thread.join()


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def free_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def phase(name, options, epochs):
    scratch = options.scratch
    store = os.path.join(scratch, f"load-{name}.db")
    shutil.copyfile(options.store, store)
    master, slave = os.openpty()
    tty.setraw(slave)
    device = os.ttyname(slave)
    port = free_port()
    gpsd = subprocess.Popen(
        ["gpsd", "-N", "-n", "-b", "-D", "0", "-S", str(port),
         "-F", os.path.join(scratch, f"load-{name}.ctl"), device],
        stderr=subprocess.DEVNULL)
    socket_path = os.path.join(scratch, f"load-{name}.sock")
    config = os.path.join(scratch, f"load-{name}.conf")
    with open(config, "w") as out:
        out.write(f"gpsd = 127.0.0.1:{port}\nstore = {store}\nsocket = {socket_path}\n"
                  f"authorization-check = 1\nsocket-clients = {options.socket_clients}\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (options.nofile, resource.getrlimit(
            resource.RLIMIT_NOFILE)[1]))

    log = open(os.path.join(scratch, f"load-{name}.daemon.log"), "w")
    daemon = subprocess.Popen([options.waymarkd, "--config", config], stderr=log,
                              preexec_fn=limit)
    result = {"phase": name}
    try:
        if not wait_for(lambda: os.path.exists(socket_path), 10):
            result["error"] = "the daemon's socket did not appear"
            return result
        # gpsd opens the device once a client (the daemon) watches; wait for that.
        wait_for(lambda: "connected to gpsd at" in open(log.name).read(), 10)
        time.sleep(0.5)
        watchers = Watchers(socket_path, options.watchers)
        churn = Churn(socket_path, options.clients) if name == "churn" else None
        if churn:
            churn.start()
            time.sleep(2)  # the churn at full rate before the drive starts
        written = {}
        anon = []
        start = time.monotonic()
        if churn:
            churn.drive = (start, start + (len(epochs) - 1) * 0.1)
        for index, (key, data) in enumerate(epochs):
            target = start + index * 0.1
            pause = target - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            os.write(master, data)
            written[key] = time.monotonic_ns()
            if index % 10 == 0:
                anon.append(anon_kb(daemon.pid))
        time.sleep(1.5)
        if churn:
            churn.close()
        time.sleep(0.5)
        watchers.close()
        result["alive"] = daemon.poll() is None
        result["epochs"] = len(epochs)
        result["anon_kb_start"] = anon[min(len(anon) - 1, 5)] if anon else 0
        result["anon_kb_end"] = anon[-1] if anon else 0
        result["anon_kb_max"] = max(anon) if anon else 0
        delays, tpv_delays, events, missing = [], [], [], 0
        for index, lines in enumerate(watchers.lines):
            previous = None
            seen = set()
            for arrived, line in lines:
                if b'"class":"TPV"' in line:
                    previous = tpv_key(line)
                    seen.add(previous)
                    if previous in written:
                        tpv_delays.append((arrived - written[previous]) / 1e6)
                elif b'"class":"ARRIVAL"' in line or b'"class":"DEPARTURE"' in line:
                    if index == 0:
                        record = json.loads(line)
                        events.append([record["class"], record["place"], record["time"]])
                    if previous in written:
                        delays.append((arrived - written[previous]) / 1e6)
            # gpsd reports nothing while it identifies the receiver: count from the first TPV.
            keys = [key for key, _ in epochs]
            first = min((keys.index(key) for key in seen if key in keys), default=len(keys))
            missing += sum(1 for key in keys[first:] if key not in seen)
            result.setdefault("first_tpv_epoch", first)
        result["events"] = events
        result["event_delays"] = len(delays)
        result["event_median_ms"] = percentile(delays, 0.5)
        result["event_p99_ms"] = percentile(delays, 0.99)
        result["event_max_ms"] = max(delays) if delays else None
        result["tpv_median_ms"] = percentile(tpv_delays, 0.5)
        result["tpv_p99_ms"] = percentile(tpv_delays, 0.99)
        result["tpvs_missing"] = missing
        if churn:
            result.update(connects=churn.connects, seconds=round(churn.seconds, 1),
                          connects_per_second=round(churn.connects / churn.seconds, 1),
                          refused=churn.refused, connect_errors=churn.errors,
                          watching_closed=churn.watched, starved=churn.starved)
        return result
    finally:
        daemon.terminate()
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        gpsd.terminate()
        gpsd.wait()
        os.close(master)
        os.close(slave)
        log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--waymarkd", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--watchers", type=int, default=5)
    parser.add_argument("--nofile", type=int, default=1024)
    parser.add_argument("--socket-clients", type=int, default=1024)
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, options.clients + 256)), hard))
    epochs = epochs_of(options.log)
    results = [phase("quiet", options, epochs), phase("churn", options, epochs)]
    json.dump(results, sys.stdout)
    print()


if __name__ == "__main__":
    main()

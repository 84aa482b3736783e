#!/usr/bin/env python3
"""A gpsd impostor for the hostile-input tests: speaks gpsd's JSON protocol on a loopback port
and sends, after a client's ?WATCH, the lines of a file as they are (hostile values included).

    fake-gpsd.py LINES_FILE [PACE_SECONDS]

Prints the port it listens on (one line, on standard error), then serves clients one after another: each gets
VERSION on connect, DEVICES and WATCH after its ?WATCH, then every line of LINES_FILE, and is
then held open (answering ?VERSION probes) until it closes. Ends on SIGTERM. With PACE_SECONDS,
it waits that long after each line (as a receiver's epochs come), else it sends them at once.
"""
import socket
import sys
import time

lines = open(sys.argv[1], "rb").read().splitlines()
pace = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(4)
print(server.getsockname()[1], file=sys.stderr, flush=True)
version = b'{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}\n'
device = b'{"class":"DEVICE","path":"/dev/hostile","driver":"NMEA0183","activated":"2026-12-05T10:00:00.000Z","flags":1,"native":0,"bps":4800,"parity":"N","stopbits":1,"cycle":1.00}'
while True:
    client, _ = server.accept()
    client.sendall(version)
    received = b""
    try:
        while b"?WATCH" not in received:
            chunk = client.recv(4096)
            if not chunk:
                raise ConnectionError
            received += chunk
        client.sendall(b'{"class":"DEVICES","devices":[' + device + b"]}\n")
        client.sendall(b'{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,'
                       b'"scaled":false,"timing":false,"split24":false,"pps":false}\n')
        for line in lines:
            client.sendall(line + b"\n")
            if pace:
                time.sleep(pace)
        while True:
            chunk = client.recv(4096)
            if not chunk:
                break
            for _ in range(chunk.count(b"?VERSION")):
                client.sendall(version)
    except (ConnectionError, OSError):
        pass
    client.close()

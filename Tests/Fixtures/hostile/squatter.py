#!/usr/bin/env python3
"""A local user squatting a broker's endpoint, for the hostile-input tests: listens where the
broker would and reports whatever a client sends it.

    squatter.py tcp ADDRESS PORT     (ADDRESS 127.0.0.1 or ::1)
    squatter.py unix PATH

Prints "listening" (on standard error) once bound, then for each connection "accepted" and,
when it closes, "received <n> bytes" with the bytes as hex on the same line. Ends on SIGTERM.
"""
import socket
import sys

if sys.argv[1] == "unix":
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sys.argv[2])
else:
    family = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    server.bind((sys.argv[2], int(sys.argv[3])))
server.listen(8)
print("listening", file=sys.stderr, flush=True)
while True:
    client, _ = server.accept()
    print("accepted", file=sys.stderr, flush=True)
    client.settimeout(3)
    data = b""
    try:
        while len(data) < 65536:
            chunk = client.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    client.close()
    print(f"received {len(data)} bytes {data.hex()}", file=sys.stderr, flush=True)

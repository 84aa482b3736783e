#!/usr/bin/env python3
"""An MQTT 5 broker that takes everything and acknowledges nothing, for the hostile-input tests:
a broker that never sends PUBACK or PUBREC must not grow the client's outbox without limit.

    silent-broker.py COMMANDS_FILE

Prints the port it listens on (one line, on standard error). Serves one client at a time: answers
CONNECT (CONNACK, success) and SUBSCRIBE (SUBACK, each filter granted); once COMMANDS_FILE exists
(a test writes it when it wants the commands), publishes each of its lines at QoS 0 to the filter
that ends in "/cmd", then prints "sent <n> commands"; answers PINGREQ; reads every PUBLISH without
acknowledging it, printing "received <n>" at every tenth. Ends on SIGTERM.
"""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mqtt_wire import read_packet, read_varint, varint  # noqa: E402


def publish(client, topic, payload):
    name = topic.encode()
    body = len(name).to_bytes(2, "big") + name + b"\x00" + payload
    client.sendall(b"\x30" + varint(len(body)) + body)


def send_commands(client, topic):
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.05)
    time.sleep(0.1)  # the writer's last line
    commands = open(sys.argv[1], "rb").read().splitlines()
    try:
        for command in commands:
            publish(client, topic, command)
    except OSError:
        return
    print(f"sent {len(commands)} commands", file=sys.stderr, flush=True)


server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(4)
print(server.getsockname()[1], file=sys.stderr, flush=True)
while True:
    client, _ = server.accept()
    received = 0
    try:
        while True:
            kind, body = read_packet(client)
            if kind == 1:  # CONNECT
                client.sendall(b"\x20\x03\x00\x00\x00")
            elif kind == 8:  # SUBSCRIBE: packet id, properties, then (filter, options) pairs
                offset = 2
                properties, offset = read_varint(body, offset)
                offset += properties
                filters = []
                while offset < len(body):
                    size = int.from_bytes(body[offset:offset + 2], "big")
                    filters.append((body[offset + 2:offset + 2 + size].decode(),
                                    body[offset + 2 + size] & 3))
                    offset += 3 + size
                reply = body[:2] + b"\x00" + bytes(qos for _, qos in filters)
                client.sendall(b"\x90" + varint(len(reply)) + reply)
                for name, _ in filters:
                    if name.endswith("/cmd"):
                        threading.Thread(target=send_commands, args=(client, name),
                                         daemon=True).start()
            elif kind == 3:  # PUBLISH: kept, never acknowledged
                received += 1
                if received % 10 == 0:
                    print(f"received {received}", file=sys.stderr, flush=True)
            elif kind == 12:  # PINGREQ
                client.sendall(b"\xd0\x00")
            elif kind == 14:  # DISCONNECT
                break
    except (ConnectionError, OSError):
        pass
    client.close()

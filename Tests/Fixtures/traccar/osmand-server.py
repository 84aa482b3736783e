#!/usr/bin/env python3
"""A Traccar-like OsmAnd endpoint for the tests, written from Traccar's protocol documentation.

    osmand-server.py PORT RECORD_FILE KNOWN_ID [KNOWN_ID ...]

Takes any HTTP method; the parameters come from the query string or, when it has none, from a
form body. `id` (or `deviceid`) is required and must be a known device, else 400 Bad Request.
`timestamp` is Unix seconds (milliseconds above 2^31-1) or ISO 8601; `lat`, `lon`, `speed`
(knots), `bearing`/`heading`, `altitude`, `accuracy`, `hdop` are numbers; others are kept as
attributes. Each accepted location is appended to RECORD_FILE as one JSON line (flushed before
the 200 is sent) with the method and the raw parameters. Prints "listening" once bound.
With TLS_CERT and TLS_KEY in the environment it speaks HTTPS with that certificate.
"""
import os
import ssl
import http.server
import json
import sys
import urllib.parse

PORT = int(sys.argv[1])
RECORD = sys.argv[2]
KNOWN = set(sys.argv[3:])
NUMBERS = ("lat", "lon", "speed", "bearing", "heading", "altitude", "accuracy", "hdop")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_any(self):
        query = urllib.parse.urlsplit(self.path).query
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("ascii", "replace") if length else ""
        params = urllib.parse.parse_qs(query or body, keep_blank_values=True)
        single = {key: values[-1] for key, values in params.items()}
        device = single.get("id") or single.get("deviceid")
        try:
            for key in NUMBERS:
                if key in single:
                    float(single[key])
            if "timestamp" in single and "T" not in single["timestamp"]:
                int(single["timestamp"])
        except ValueError:
            return self.answer(400)
        if device not in KNOWN:
            return self.answer(400)
        with open(RECORD, "a", encoding="utf-8") as record:
            record.write(json.dumps({"method": self.command, "params": single}) + "\n")
            record.flush()
        self.answer(200)

    def answer(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_PUT = handle_any

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        sys.stderr.write("%s\n" % (format % args))


server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
if os.environ.get("TLS_CERT"):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.environ["TLS_CERT"], os.environ["TLS_KEY"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
sys.stderr.write("listening\n")
sys.stderr.flush()
server.serve_forever()

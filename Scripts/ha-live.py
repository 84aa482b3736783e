#!/usr/bin/env python3
"""Drives a running Home Assistant through its REST API, for HomeAssistantLiveTests.

    ha-live.py setup URL MQTT_PORT    onboards the instance (a user, its token) and adds the MQTT
                                      integration for the broker on 127.0.0.1:MQTT_PORT; prints
                                      the access token
    ha-live.py states URL TOKEN       prints every entity's state as JSON ({entity_id: {state,
                                      attributes}})
    ha-live.py wait URL               waits (at most 180 s) until the instance answers

Exit 1 with the server's answer on any failure.
"""
import json
import sys
import urllib.parse
import urllib.request


def call(url, path, body=None, token=None, form=False):
    data = None
    headers = {}
    if body is not None:
        if form:
            data = urllib.parse.urlencode(body).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = "Bearer " + token
    request = urllib.request.Request(url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        sys.exit(f"{path}: HTTP {error.code}: {error.read()[:500]!r}")


def setup(url, mqtt_port):
    client = url + "/"
    user = call(url, "/api/onboarding/users", {
        "client_id": client, "name": "Test", "username": "test", "password": "test-password-1",
        "language": "en"})
    tokens = call(url, "/auth/token", {
        "grant_type": "authorization_code", "code": user["auth_code"], "client_id": client},
        form=True)
    token = tokens["access_token"]
    flow = call(url, "/api/config/config_entries/flow", {"handler": "mqtt"}, token)
    result = call(url, "/api/config/config_entries/flow/" + flow["flow_id"],
                  {"broker": "127.0.0.1", "port": int(mqtt_port)}, token)
    if result.get("type") != "create_entry":
        sys.exit(f"MQTT flow: {result}")
    print(token)


def states(url, token):
    every = call(url, "/api/states", token=token)
    print(json.dumps({s["entity_id"]: {"state": s["state"], "attributes": s["attributes"]}
                      for s in every}))


def wait(url):
    import time
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/api/onboarding", timeout=5) as response:
                if response.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.5)
    sys.exit("Home Assistant did not answer within 180 s")


if sys.argv[1] == "wait":
    wait(sys.argv[2])
elif sys.argv[1] == "setup":
    setup(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "states":
    states(sys.argv[2], sys.argv[3])
else:
    sys.exit("usage: ha-live.py setup URL MQTT_PORT | states URL TOKEN")

#!/usr/bin/env python3
"""Validates Home Assistant discovery configs with Home Assistant's own schemas.

Reads lines "<topic> <payload>" on standard input (what `mosquitto_sub -v` prints, or what
HomeAssistantDiscoveryTests writes), picks each config's component from its topic
(<prefix>/<component>/<node>/<object>/config) and validates the payload with that MQTT
platform's DISCOVERY_SCHEMA from the installed `homeassistant` package. Prints one line per
config and exits 1 when any is refused, 2 when Home Assistant is not importable.
"""
import json
import sys

try:
    from homeassistant.components.mqtt import device_tracker, sensor
    from homeassistant.const import __version__
except Exception as error:  # noqa: BLE001 - any import failure means "not available"
    print(f"homeassistant is not importable: {error}", file=sys.stderr)
    sys.exit(2)

SCHEMAS = {"device_tracker": device_tracker.DISCOVERY_SCHEMA, "sensor": sensor.DISCOVERY_SCHEMA}
refused = 0
checked = 0
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    topic, _, payload = line.partition(" ")
    levels = topic.split("/")
    if len(levels) != 5 or levels[-1] != "config":
        continue
    component = levels[1]
    schema = SCHEMAS.get(component)
    if schema is None:
        print(f"REFUSED {topic}: no schema for {component}")
        refused += 1
        continue
    config = json.loads(payload)
    # Discovery passes the platform along with the config.
    config["platform"] = "mqtt"
    try:
        schema(config)
        print(f"ok {topic}")
    except Exception as error:  # noqa: BLE001 - voluptuous raises several kinds
        print(f"REFUSED {topic}: {error}")
        refused += 1
    checked += 1
print(f"Home Assistant {__version__}: {checked} config(s) checked, {refused} refused")
sys.exit(1 if refused or checked == 0 else 0)

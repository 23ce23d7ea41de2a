#!/usr/bin/env python3
"""Replays what altbeacond's monitor publishes through Home Assistant's own code (SPEC §12).

  check-discovery.py TRACE

TRACE: one JSON object a line, {"t": seconds, "topic", "payload", "retain"}, as the unit test
MonitorHomeAssistantTimelineTests writes it (ALTBEACOND_HA_TRACE): the real MonitorPublisher over
a scripted timeline (a beacon heard, then silent for 15 minutes, then the monitor killed and its
will published by the broker).

1. Every discovery payload is validated by the component's DISCOVERY_SCHEMA (binary_sensor,
   sensor; text, number, switch, button for the local beacon's control entities, issue 32) and
   the origin by MQTT_ORIGIN_INFO_SCHEMA; topics match HA's TOPIC_MATCHER; unique_ids
   are unique; every device.via_device names a device that is announced.
2. The entity states are replayed second by second with HA's rules (binary_sensor.py, sensor.py,
   mixins.py of 2024.1): each state message rendered by HA's own Template engine and resets
   expire_after; availability is the availability topic's latest payload (unavailable until
   the first); expiry or unavailability shows as `unavailable`.
   Asserted: the beacon's "On air" is `on`, then `off` without a gap for as long as the monitor
   is up (10+ minutes of silence), never `unavailable` until the will, `unavailable` after it;
   the observer's "Monitor" is `on`, then `off` after the will; every other entity is
   available until the will and `unavailable` after it; the local beacon's entities show what
   its status file says. Each control entity's command_topic is one the monitor subscribes to
   (altbeacond/<node>/beacon/set/+), and a number's command_template, rendered by HA for a
   fractional value, gives the whole number the beacon daemon takes.
Exit 0 when all holds, 1 otherwise (each failure said).
"""
import asyncio
import json
import sys
import tempfile

import homeassistant.components.persistent_notification  # noqa: F401  (breaks an import cycle)
from homeassistant.components.mqtt import binary_sensor, button, number, sensor, switch, text
from homeassistant.components.mqtt.discovery import MQTT_ORIGIN_INFO_SCHEMA, TOPIC_MATCHER
from homeassistant.core import HomeAssistant
from homeassistant.helpers.template import Template

SCHEMAS = {"binary_sensor": binary_sensor.DISCOVERY_SCHEMA, "sensor": sensor.DISCOVERY_SCHEMA,
           "text": text.DISCOVERY_SCHEMA, "number": number.DISCOVERY_SCHEMA, "switch": switch.DISCOVERY_SCHEMA,
           "button": button.DISCOVERY_SCHEMA}
PAYLOAD_NONE = "None"
failures = []


def fail(text):
    failures.append(text)
    print("FAIL: " + text)


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def discovery(messages, prefix="homeassistant"):
    """The entities as HA ends up with them: the last config per topic, empty ones removed."""
    configs = {}
    for m in messages:
        if not m["topic"].startswith(prefix + "/"):
            continue
        topic = m["topic"][len(prefix) + 1:]
        match = TOPIC_MATCHER.fullmatch(topic)
        if not match:
            fail(f"{m['topic']}: not a discovery topic HA reads")
            continue
        if m["payload"] == "":
            configs.pop(m["topic"], None)
            continue
        component = match.group("component")
        raw = json.loads(m["payload"])
        if component not in SCHEMAS:
            fail(f"{m['topic']}: component {component} not checked")
            continue
        try:
            MQTT_ORIGIN_INFO_SCHEMA(raw.get("origin"))
            config = SCHEMAS[component](dict(raw, platform="mqtt"))
        except Exception as e:  # voluptuous.Invalid and friends: the schema said no
            fail(f"{m['topic']}: refused by HA's schema: {e}")
            continue
        configs[m["topic"]] = (component, config, raw)
    unique = [c[2]["unique_id"] for c in configs.values()]
    if len(set(unique)) != len(unique):
        fail(f"unique_id repeated: {sorted(unique)}")
    devices = set()
    for _, _, raw in configs.values():
        devices.update(raw.get("device", {}).get("identifiers", []))
    for topic, (_, _, raw) in configs.items():
        via = raw.get("device", {}).get("via_device")
        if via is not None and via not in devices:
            fail(f"{topic}: via_device {via} names no announced device")
    print(f"discovery: {len(configs)} entities in {len(devices)} devices accepted by HA's schemas")
    return configs


class Entity:
    """One MQTT entity's state, by binary_sensor.py / sensor.py of HA 2024.1."""

    def __init__(self, hass, component, config, raw):
        self.component, self.config, self.name = component, config, raw["unique_id"]
        self.template = Template(raw["value_template"], hass) if "value_template" in raw else None
        self.expire_after = config.get("expire_after")
        self.availability = raw.get("availability_topic")
        self.available = self.availability is None
        self.last_message = None
        self.value = None   # None: unknown

    def message(self, t, topic, payload):
        if topic == self.availability:
            if payload == self.config.get("payload_available", "online"):
                self.available = True
            elif payload == self.config.get("payload_not_available", "offline"):
                self.available = False
        if topic != self.config.get("state_topic"):
            return
        self.last_message = t
        rendered = self.template.async_render_with_possible_json_value(payload, "") if self.template else payload
        rendered = str(rendered)
        if self.component == "switch":
            # switch.py: state_on / state_off (default payload_on / payload_off), "None" unknown
            if rendered == self.config.get("state_on", self.config["payload_on"]):
                self.value = "on"
            elif rendered == self.config.get("state_off", self.config["payload_off"]):
                self.value = "off"
            elif rendered == PAYLOAD_NONE:
                self.value = None
            else:
                fail(f"{self.name}: payload {rendered!r} is neither state_on nor state_off")
        elif self.component == "number":
            # number.py: payload_reset ("None") unknown; else a number within min..max
            if not rendered.strip():
                return
            if rendered == self.config["payload_reset"]:
                self.value = None
                return
            try:
                value = float(rendered)
            except ValueError:
                fail(f"{self.name}: {rendered!r} is not a number")
                return
            if not self.config["min"] <= value <= self.config["max"]:
                fail(f"{self.name}: {value} outside {self.config['min']}..{self.config['max']}")
                return
            self.value = f"{value:g}"
        elif self.component == "text":
            # text.py: the rendered string; HA refuses a state longer than max
            if len(rendered) > self.config["max"]:
                fail(f"{self.name}: {rendered!r} is longer than {self.config['max']}")
            self.value = rendered
        elif self.component == "binary_sensor":
            if not rendered.strip():
                return
            if rendered == self.config["payload_on"]:
                self.value = "on"
            elif rendered == self.config["payload_off"]:
                self.value = "off"
            elif rendered == PAYLOAD_NONE:
                self.value = None
            else:
                fail(f"{self.name}: payload {rendered!r} is neither on nor off")
        else:
            numeric = "state_class" in self.config or "unit_of_measurement" in self.config
            if numeric and rendered == PAYLOAD_NONE:
                self.value = None
            elif numeric:
                try:
                    float(rendered)
                except ValueError:
                    fail(f"{self.name}: {rendered!r} is not a number")
                self.value = rendered
            else:
                options = self.config.get("options")
                if options and rendered not in options:
                    fail(f"{self.name}: {rendered!r} is not one of {options}")
                self.value = rendered
        if "json_attributes_template" in self.config:
            attrs = Template(self.config["json_attributes_template"].template, self.template.hass)
            if not isinstance(json.loads(attrs.async_render_with_possible_json_value(payload, "")), dict):
                fail(f"{self.name}: json_attributes_template gives no object")

    def state(self, t):
        # expire_after: async_call_later(expire_after) from the last message; expired until the first
        if self.expire_after and (self.last_message is None or t >= self.last_message + self.expire_after):
            return "unavailable"
        if not self.available:
            return "unavailable"
        return self.value if self.value is not None else "unknown"


def replay(messages, configs, hass):
    entities = [Entity(hass, *c) for c in configs.values()]
    will = max(m["t"] for m in messages if m["topic"].endswith("/status") and m["payload"] == "offline")
    end = max(m["t"] for m in messages) + 300
    history = {e.name: [] for e in entities}
    pending = sorted(messages, key=lambda m: m["t"])
    i, t = 0, 0.0
    while t <= end:
        while i < len(pending) and pending[i]["t"] <= t:
            for e in entities:
                e.message(pending[i]["t"], pending[i]["topic"], pending[i]["payload"])
            i += 1
        for e in entities:
            history[e.name].append((t, e.state(t)))
        t += 1.0
    return history, will


def check(history, will):
    on_air = [n for n in history if n.endswith("__connectivity")]
    monitor = [n for n in history if n.endswith("__monitor")]
    if not on_air or not monitor:
        fail("no On air or Monitor entity")
    for name, states in history.items():
        up = [s for t, s in states if 1 <= t < will]
        after = [s for t, s in states if t >= will + 1]
        if name in monitor:
            if set(up) != {"on"} or set(after) != {"off"}:
                fail(f"{name}: {sorted(set(up))} while up, {sorted(set(after))} after the will (on, then off)")
            continue
        if "unavailable" in up:
            first = next(t for t, s in states if 1 <= t < will and s == "unavailable")
            fail(f"{name}: unavailable at {first:.0f} s while the monitor was up (the will at {will:.0f} s)")
        if set(after) != {"unavailable"}:
            fail(f"{name}: {sorted(set(after))} after the will, not unavailable")
        if name in on_air:
            seq = [s for t, s in states if 1 <= t < will]
            changes = [s for k, s in enumerate(seq) if k == 0 or seq[k - 1] != s]
            silent = sum(1 for s in seq if s == "off")
            if changes != ["on", "off"] or silent < 600:
                fail(f"{name}: {changes} with {silent} s off while up (want on, then off for 10+ minutes)")
            else:
                print(f"{name}: on, then off for {silent} s until the will at {will:.0f} s, never unavailable; "
                      f"unavailable after it")


# What the local beacon's device (issue 32) shows while the monitor is up, from the unit test's
# status file: on air with a refused edit.
LOCAL_BEACON = {"on_air": "on", "health": "degraded", "phase": "advertising", "fault": "none", "rearms": "3",
                "frames": "altbeacon, ibeacon", "adapter": "hci0", "interval": "100", "config_refused": "on",
                "soc_temperature": "51.5", "uptime": "125", "version": "0.1.0",
                # [mqtt] control on: the configured values, and the last change from afar
                "uuid": "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6", "major": "1", "minor": "2", "power": "-59",
                "interval_ms": "100", "advertising": "on", "altbeacon": "on", "ibeacon": "on", "overflow": "off",
                "eddystone": "off", "eddystone_tlm": "on", "identify": "unknown", "restart": "unknown",
                "last_change": "refused: set power 5: config.toml:3:9: beacon.power must be -127…0"}


def check_local_beacon(history, will):
    local = {n: s for n, s in history.items() if n.startswith("altbeacond_beacon__")}
    for obj, want in LOCAL_BEACON.items():
        names = [n for n in local if n.endswith("__" + obj)]
        if len(names) != 1:
            fail(f"the local beacon's {obj} entity: {len(names)} found")
            continue
        up = {s for t, s in local[names[0]] if 1 <= t < will}
        if up != {want}:
            fail(f"{names[0]}: {sorted(up)} while the monitor was up, want {want!r}")
    if len(local) != len(LOCAL_BEACON):
        fail(f"the local beacon's device has {len(local)} entities, want {len(LOCAL_BEACON)}")
    elif not failures:
        print(f"the local beacon's device: {len(local)} entities, each as its status file says while the monitor is up")


def check_commands(configs, hass):
    """The control entities send where the monitor listens, and what the daemon takes."""
    commands = 0
    for topic, (component, config, raw) in configs.items():
        if "command_topic" not in raw:
            continue
        commands += 1
        node = raw["device"]["identifiers"][0]
        want = raw["state_topic"] + "/set/" if "state_topic" in raw else None
        if not raw["command_topic"].startswith("altbeacond/") or "/beacon/set/" not in raw["command_topic"] \
                or raw["command_topic"].count("/") != 4 or (want and not raw["command_topic"].startswith(want)):
            fail(f"{topic}: command_topic {raw['command_topic']} is not under the monitor's altbeacond/<node>/beacon/set/+")
        if not node.startswith("altbeacond_beacon__"):
            fail(f"{topic}: a control entity off the local beacon's device ({node})")
        if component == "number":
            template = Template(raw["command_template"], hass)
            sent = str(template.async_render({"value": float(config["min"]) + 0.0}))
            if sent != str(int(config["min"])):
                fail(f"{topic}: command_template sends {sent!r} for {config['min']}")
    print(f"control: {commands} entities send to the monitor's set topics")
    return commands


async def main(path):
    messages = load(path)
    configs = discovery(messages)
    hass = HomeAssistant(tempfile.mkdtemp())
    history, will = replay(messages, configs, hass)
    check(history, will)
    check_local_beacon(history, will)
    if check_commands(configs, hass) == 0:
        fail("no control entity: the trace was made with control off")
    print(f"{len(failures)} failures" if failures else "Home Assistant sees the truth")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[1])))

#!/usr/bin/env python3
"""Many monitors, one broker, one Home Assistant with its recorder (issue 48): a fleet benchmark.

  bench-monitors.py [-n N] [--idle-s S] [--keep]      (run by ./bench-monitors with HA's venv python)

N simulated Raspberry Pis (default 40), each the real `altbeacond monitor` (ALTBEACOND_BIN) with
its own board serial (ALTBEACOND_BOARD_SERIAL: a file as the device tree has it, so its own MQTT
client ID), its own node, RUNTIME_DIRECTORY (the local beacon daemon's status file, written here
as the daemon writes it: a rename, and rewritten every 60 s as the daemon rewrites it, with only
`updated` changing), STATE_DIRECTORY, and A/B card (ALTBEACOND_UPDATE_DIR, ALTBEACOND_IMAGE_MARKER:
an updater's idle state file); `[mqtt]` alone with control = "beacon" (no [expect] table: no
Bluetooth), as on a beacon's own Pi. Each beacon its own minor (one UUID and major: a fleet), so
each local beacon is a device of its own in HA. All against one mosquitto (127.0.0.1, a free port,
a password file, persistence off: nothing outlives a restart) and one Home Assistant core (the
venv's, `--skip-pip`) with `recorder:` (sqlite home-assistant_v2.db in its config directory,
commit_interval 1) beside http and api; MQTT set up from a seeded config entry, an admin token
seeded (as check-live.py does; its status-file helpers are imported from it, so the daemon's
file keeps the shape check-live.py keeps).

Prints, one figure a line, each prefixed "bench-monitors:":
  - seconds from the monitors' start (HA already running) until every monitor's entities are in
    HA and none is unavailable (nor "None"), the beacon's On air `on`: "on air in HA"; the
    slowest and the median monitor beside it;
  - after HA is stopped and started again on the same config directory: seconds from its launch
    until all are back (its launch-to-RUNNING beside it);
  - after mosquitto is stopped and started again (nothing retained: persistence off): seconds
    from its start until all are back in HA;
  - over an idle window (nothing changing; S seconds, a multiple of 60 so every 30 s and 60 s
    period falls in it a whole number of times): MQTT messages seen on the broker (a subscriber
    to '#') by topic, and rows added to the recorder's `states` table (last_updated_ts in the
    window, read after HA's commit), both per beacon per day, the three entities with the most
    rows, beside the target (<= 1,000 rows per beacon per day).
Figures are printed, never judged (SPEC: benchmarks print figures). Exit status 0 when it ran;
1 when it could not (HA did not start, the monitors never came on air, a tool missing); 2 usage.

Environment: ALTBEACOND_BIN (required), BENCH_POLL (seconds between two looks at HA, default 0.5),
BENCH_TIMEOUT (seconds each wait for "all on air" may take, default 120 + 3 N), BENCH_START_TIMEOUT
(seconds HA may take to start, default 240).
"""
import hashlib
import importlib.util
import json
import os
import pwd
import re
import secrets
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error


HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("check_live", os.path.join(HERE, "check-live.py"))
live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live)   # its helpers: the daemon's status file, processes, the REST client

POLL = float(os.environ.get("BENCH_POLL", "0.5"))
START_TIMEOUT = float(os.environ.get("BENCH_START_TIMEOUT", "240"))
TARGET_ROWS = 1000
PREFIX = "bench-monitors:"
T0 = time.monotonic()


def say(text):
    """Progress, on stderr: stdout carries the figures alone."""
    print(f"[{time.monotonic() - T0:6.1f} s] {text}", file=sys.stderr, flush=True)


def figure(text):
    print(f"{PREFIX} {text}", flush=True)


class CannotRun(Exception):
    pass


class Broker:
    """mosquitto with a password file, persistence off, and a subscriber to '#' that keeps every
    topic's last payload (the discovery) and the time of each message (the counts)."""

    def __init__(self, bench):
        self.bench = bench
        self.port = live.free_port()
        self.passwords = {"homeassistant": secrets.token_hex(8), "altbeacond": secrets.token_hex(8),
                          "bench": secrets.token_hex(8)}
        d = bench.dir
        pw = os.path.join(d, "mosquitto.passwd")
        os.close(os.open(pw, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        for user, password in self.passwords.items():
            subprocess.run(["mosquitto_passwd", "-b", pw, user, password], check=True)
        os.chmod(pw, 0o600)
        self.conf = os.path.join(d, "mosquitto.conf")
        with open(self.conf, "w") as f:
            # as root, mosquitto would become the user "mosquitto", who cannot read our directory;
            # max_queued_messages: HA's discovery burst of N x 34 topics at once
            f.write(f"user {pwd.getpwuid(os.geteuid()).pw_name}\n"
                    f"listener {self.port} 127.0.0.1\nallow_anonymous false\npassword_file {pw}\n"
                    "persistence false\nmax_queued_messages 100000\n"
                    "log_dest stdout\nlog_type error\nlog_type warning\nlog_type notice\n")
        self.password_file = os.path.join(d, "monitor-mqtt-password")
        with open(self.password_file, "w") as f:
            f.write(self.passwords["altbeacond"] + "\n")
        os.chmod(self.password_file, 0o600)
        self.lock = threading.Lock()
        self.latest = {}      # topic -> payload (text)
        self.seen = []        # (unix time, topic)
        self.proc = None
        self.client = None

    def start(self):
        self.proc = self.bench.procs.start("mosquitto", ["mosquitto", "-c", self.conf], os.path.join(self.bench.dir, "mosquitto.log"))
        ok, _ = live.wait_until("mosquitto", lambda: (live.port_open(self.port), None), timeout=10, interval=0.05)
        if not ok:
            raise CannotRun("mosquitto did not listen: " + self.bench.tail("mosquitto.log"))
        return time.monotonic()

    def stop(self):
        self.bench.procs.stop(self.proc)

    def subscribe(self):
        c = live.mqtt_client("altbeacond-bench-monitors")
        c.username_pw_set("bench", self.passwords["bench"])
        c.reconnect_delay_set(min_delay=1, max_delay=1)   # back at once after the broker's restart
        c.on_connect = lambda cl, u, f, rc: cl.subscribe("#", 0)
        c.on_message = self._message
        c.connect("127.0.0.1", self.port)
        c.loop_start()
        self.client = c

    def _message(self, client, userdata, msg):
        t = time.time()
        with self.lock:
            self.latest[msg.topic] = msg.payload.decode("utf-8", "replace")
            self.seen.append((t, msg.topic))

    def close(self):
        if self.client:
            self.client.loop_stop()
            self.client.disconnect()


class Pi:
    """One simulated Raspberry Pi: its board serial, node, directories, beacon and monitor."""

    def __init__(self, bench, i):
        self.i = i
        self.node = f"bench-pi-{i:02d}"
        self.home = os.path.join(bench.dir, self.node)
        self.run_dir = os.path.join(self.home, "run")
        self.state_dir = os.path.join(self.home, "state")
        self.update_dir = os.path.join(self.home, "altbeacon-update")
        # the daemon's runtime directory (0755) and its requests/ (0700), as it makes them
        os.makedirs(os.path.join(self.run_dir, "requests"), mode=0o700)
        os.chmod(self.run_dir, 0o755)
        os.makedirs(self.state_dir)
        os.makedirs(self.update_dir, mode=0o770)
        # /sys/firmware/devicetree/base/serial-number: 16 hex digits and a NUL
        self.serial = os.path.join(self.home, "serial-number")
        with open(self.serial, "wb") as f:
            f.write(f"10000000be{i:06x}".encode() + b"\0")
        self.marker = os.path.join(self.home, "altbeacon-image")
        open(self.marker, "w").close()
        with open(os.path.join(self.update_dir, "state"), "w") as f:
            f.write(f"installed_version={bench.version}\nslot=A\nphase=idle\noutcome=none\n")
        self.conf = os.path.join(self.home, "monitor.toml")
        with open(self.conf, "w") as f:
            f.write(f'[monitor]\nnode = "{self.node}"\n\n[mqtt]\nhost = "127.0.0.1"\nport = {bench.broker.port}\n'
                    f'username = "altbeacond"\npassword_file = "{bench.broker.password_file}"\nkeepalive_s = 30\n'
                    'control = "beacon"\n')
        # the beacon: the fleet's UUID and major, its own minor; booted at its own time
        now = int(time.time())
        s = live.alive_status(now, os.getpid())
        uuid, major = s.get("uuid", "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"), s.get("major", 1)
        s.update(minor=i + 1, beacon=f"{uuid} {major} {i + 1}", started=now - 3600 - 97 * i)
        self.status = s
        self.next_write = 0.0
        self.proc = None
        self.log = os.path.join(self.home, "monitor.log")

    def write_status(self):
        self.status["updated"] = int(time.time())
        live.write_status(self.run_dir, self.status)

    def start(self, bench):
        env = dict(os.environ, ALTBEACOND_BOARD_SERIAL=self.serial, RUNTIME_DIRECTORY=self.run_dir,
                   STATE_DIRECTORY=self.state_dir, ALTBEACOND_UPDATE_DIR=self.update_dir,
                   ALTBEACOND_IMAGE_MARKER=self.marker)
        self.proc = bench.procs.start(self.node, [bench.binary, "monitor", "--config", self.conf], self.log, env=env)

    def client_id(self):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                m = re.search(r"client ID (altbeacond-[0-9a-f]+)", f.read())
                return m.group(1) if m else None
        except OSError:
            return None


class Bench:
    def __init__(self, binary, n, idle_s, keep):
        self.binary, self.n, self.idle_s, self.keep = binary, n, idle_s, keep
        self.timeout = float(os.environ.get("BENCH_TIMEOUT", str(120 + 3 * n)))
        self.dir = tempfile.mkdtemp(prefix="altbeacond-bench-monitors-")
        self.ha_dir = os.path.join(self.dir, "ha")
        self.procs = live.Processes()
        self.version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()[-1]
        self.broker = Broker(self)
        self.pis = [Pi(self, i) for i in range(n)]
        self.by_node = {p.node: p for p in self.pis}
        self.entity_of = {}   # HA entity_id -> (node, component, object), as last matched
        self.stop_daemons = threading.Event()
        self.hass = None

    # --- small things --------------------------------------------------------------------------
    def tail(self, name, n=30):
        return live.tail_file(self.dir, name, n)

    # --- the beacon daemons: each Pi's status file rewritten every 60 s, staggered ---------------
    def daemons(self):
        now = time.monotonic()
        for p in self.pis:   # each written once already, before its monitor started
            p.next_write = now + 60 * (1 + p.i / self.n)
        while not self.stop_daemons.wait(0.5):
            now = time.monotonic()
            for p in self.pis:
                if now >= p.next_write:
                    p.write_status()
                    p.next_write += 60

    # --- Home Assistant ------------------------------------------------------------------------
    def seed_ha(self):
        # the recorder on (sqlite, the default database), committed every second
        self.http_port, self.ha = live.seed_home_assistant(
            self.ha_dir, "bench", self.broker.port, self.broker.passwords["homeassistant"],
            extra="recorder:\n  commit_interval: 1\n", log_level="warning", token_days=30)

    def start_ha(self):
        """Launches HA; returns (its launch's monotonic time, seconds to RUNNING)."""
        t = time.monotonic()
        self.hass = self.procs.start("hass", [sys.executable, "-m", "homeassistant", "--config", self.ha_dir, "--skip-pip",
                                              "--log-no-color"], os.path.join(self.dir, "hass.out"))

        def running():
            if self.hass.poll() is not None:
                return True, f"hass exited with {self.hass.returncode}"
            try:
                return self.ha.request("GET", "/api/config", timeout=5).get("state") == "RUNNING", None
            except (urllib.error.URLError, ConnectionError, OSError, ValueError) as e:
                return False, str(e)

        ok, detail = live.wait_until("HA running", running, timeout=START_TIMEOUT, interval=0.5)
        if not ok or self.hass.poll() is not None:
            raise CannotRun(f"Home Assistant did not reach RUNNING: {detail}\n{self.tail('ha/home-assistant.log', 40)}")
        components = self.ha.request("GET", "/api/config").get("components", [])
        if "recorder" not in components:
            raise CannotRun(f"Home Assistant runs without its recorder (components: {', '.join(sorted(components))}):\n"
                            + self.tail("ha/home-assistant.log", 40))
        return t, time.monotonic() - t

    def stop_ha(self):
        t = time.monotonic()
        self.procs.stop(self.hass, timeout=90)
        return time.monotonic() - t

    # --- "on air in HA" ---------------------------------------------------------------------------
    def announced(self):
        """node -> {(component, friendly name): object}, from the retained discovery the monitors
        published (as the subscriber last saw it)."""
        out = {}
        pattern = re.compile(r"homeassistant/([a-z_]+)/altbeacond(?:_beacon)?__(bench-pi-\d+)/([a-z_]+)/config")
        with self.broker.lock:
            items = list(self.broker.latest.items())
        for topic, payload in items:
            m = pattern.fullmatch(topic)
            if not m or not payload:
                continue
            c = json.loads(payload)
            device = c.get("device", {}).get("name", "")
            friendly = device if c.get("name") is None else f"{device} {c['name']}"
            out.setdefault(m.group(2), {})[(m.group(1), friendly)] = m.group(3)
        return out

    def look(self):
        """-> {node: None (on air in HA) or why not}; maps HA's entity IDs to nodes on the way."""
        ann = self.announced()
        try:
            states = self.ha.states()
        except (urllib.error.URLError, ConnectionError, OSError, ValueError) as e:
            return {p.node: f"HA: {e}" for p in self.pis}
        by_name = {}
        for eid, s in states.items():
            by_name.setdefault((eid.split(".")[0], s["attributes"].get("friendly_name")), []).append(s)
        full = max((len(a) for a in ann.values()), default=0)
        out = {}
        for p in self.pis:
            a = ann.get(p.node, {})
            if not a:
                out[p.node] = "nothing announced"
                continue
            if len(a) < full:
                out[p.node] = f"{len(a)} of {full} entities announced"
                continue
            why = None
            for (component, friendly), obj in sorted(a.items()):
                found = by_name.get((component, friendly), [])
                if len(found) != 1:
                    why = why or f"{component} {friendly!r}: {len(found)} in HA"
                    continue
                s = found[0]
                self.entity_of[s["entity_id"]] = (p.node, component, obj)
                if s["state"] in ("unavailable", "None") or (obj == "on_air" and s["state"] != "on"):
                    why = why or f"{s['entity_id']} is {s['state']!r}"
            out[p.node] = why
        return out

    def wait_on_air(self, phase, since):
        """Polls until every monitor is on air in HA in one look. -> (seconds since `since` or None,
        per-node seconds to the first look it was on air, the last look's problems)."""
        first, last_problems = {}, {}
        deadline = time.monotonic() + self.timeout
        while True:
            looked = self.look()
            now = time.monotonic()
            for node, why in looked.items():
                if why is None and node not in first:
                    first[node] = now - since
            last_problems = {n: w for n, w in looked.items() if w is not None}
            if not last_problems:
                return now - since, first, {}
            if now > deadline:
                return None, first, last_problems
            time.sleep(POLL)

    def on_air_figure(self, label, took, first, problems, extra=""):
        per = sorted(first.values())
        # each monitor's first look on air, where they differ (one look found them all: no spread)
        spread = (f"; each monitor on air after: median {statistics.median(per):.1f} s, slowest {per[-1]:.1f} s"
                  if per and per[0] != per[-1] else "")
        if took is None:
            ex = next(iter(sorted(problems.items())))
            figure(f"{label}: NOT all on air within {self.timeout:.0f} s: {len(first)} of {self.n} ever were; "
                   f"e.g. {ex[0]}: {ex[1]}{spread}{extra}")
        else:
            figure(f"{label}: {took:.1f} s until all {self.n} on air in HA{spread}{extra}")

    # --- the idle window --------------------------------------------------------------------------
    def rows(self, t0, t1):
        """The recorder's state rows with last_updated_ts in [t0, t1): {entity_id: rows}."""
        db = os.path.join(self.ha_dir, "home-assistant_v2.db")
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            return dict(con.execute(
                "SELECT m.entity_id, COUNT(*) FROM states s JOIN states_meta m ON s.metadata_id = m.metadata_id "
                "WHERE s.last_updated_ts >= ? AND s.last_updated_ts < ? GROUP BY m.entity_id", (t0, t1)).fetchall())
        finally:
            con.close()

    @staticmethod
    def topic_group(topic):
        m = re.fullmatch(r"altbeacond/bench-pi-\d+/(.+)", topic)
        if m:
            return "altbeacond/<node>/" + m.group(1)
        m = re.fullmatch(r"homeassistant/([a-z_]+)/altbeacond(_beacon)?__bench-pi-\d+/[a-z_]+/config", topic)
        if m:
            return "homeassistant/…/config (discovery)"
        return topic

    def idle(self):
        per_day = lambda count: count * 86400.0 / self.idle_s / self.n   # noqa: E731
        t0 = time.time()
        say(f"idle window: {self.idle_s} s, nothing changing (the daemons rewrite their status files every 60 s, "
            "as the daemon does)")
        time.sleep(self.idle_s)
        t1 = time.time()
        time.sleep(4)   # commit_interval 1: everything of the window committed
        with self.broker.lock:
            seen = [topic for t, topic in self.broker.seen if t0 <= t < t1]
        groups = {}
        for topic in seen:
            g = self.topic_group(topic)
            groups[g] = groups.get(g, 0) + 1
        self.look()   # entity IDs -> nodes, as HA has them now
        rows = self.rows(t0, t1)
        ours = {e: c for e, c in rows.items() if e in self.entity_of}
        others = {e: c for e, c in rows.items() if e not in self.entity_of}
        by_object = {}
        for e, c in ours.items():
            _, component, obj = self.entity_of[e]
            by_object[f"{component} {obj}"] = by_object.get(f"{component} {obj}", 0) + c
        total = sum(ours.values())
        figure(f"idle {self.idle_s} s, MQTT messages: {per_day(len(seen)):,.0f} per beacon per day "
               f"({len(seen)} messages from {self.n} monitors); by topic: "
               + ", ".join(f"{g} {per_day(c):,.0f}" for g, c in sorted(groups.items(), key=lambda x: -x[1])))
        rate = per_day(total)
        figure(f"idle {self.idle_s} s, recorder state rows: {rate:,.0f} per beacon per day ({total} rows from "
               f"{len(ours)} of the {len(self.entity_of)} entities of {self.n} monitors; target <= {TARGET_ROWS:,}: "
               f"{'within' if rate <= TARGET_ROWS else 'over'})"
               + (f"; besides, {sum(others.values())} rows of HA's own entities" if others else ""))
        top = sorted(by_object.items(), key=lambda x: -x[1])[:3]
        figure("idle, the entities with the most rows: "
               + (", ".join(f"{o} {per_day(c):,.0f}/beacon/day ({c / self.n:.1f} rows each in {self.idle_s} s)" for o, c in top)
                  or "none (no row in the window)"))

    # --- the run ----------------------------------------------------------------------------------
    def run(self):
        load = " ".join(open("/proc/loadavg").read().split()[:3])
        self.broker.start()
        self.broker.subscribe()
        self.seed_ha()
        say(f"in {self.dir}: {self.n} monitors, mosquitto on {self.broker.port}, HA on {self.http_port}")
        _, ha_up = self.start_ha()
        ha_version = self.ha.request("GET", "/api/config").get("version", "?")
        mosq = subprocess.run(["mosquitto", "-h"], capture_output=True, text=True).stdout.split("\n")[0]
        with open(self.binary, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()[:12]
        figure(f"{self.n} monitors as separate Pis ({os.path.basename(self.binary)} {self.version}, {self.binary}, sha256 {sha}…); "
               f"Home Assistant {ha_version} with its recorder (sqlite, commit_interval 1); {mosq.strip()}; "
               f"{os.cpu_count()} cores, load {load} at the start")
        say(f"Home Assistant {ha_version} RUNNING after {ha_up:.1f} s")

        for p in self.pis:
            p.write_status()
        threading.Thread(target=self.daemons, daemon=True).start()
        t = time.monotonic()
        for p in self.pis:
            p.start(self)
        took, first, problems = self.wait_on_air("start", t)
        ids = [p.client_id() for p in self.pis]
        clash = f"; only {len(set(ids))} distinct MQTT client IDs" if len(set(ids)) != self.n else ""
        entities = sum(1 for v in self.entity_of.values())
        self.on_air_figure("start (HA running, the monitors started at once)", took, first, problems,
                           f"; {entities} entities{clash}")
        if took is None and not first:
            raise CannotRun("no monitor came on air in HA:\n" + self.tail(f"{self.pis[0].node}/monitor.log"))

        stopped = self.stop_ha()
        say(f"Home Assistant stopped ({stopped:.1f} s)")
        t, ha_up = self.start_ha()
        took, first, problems = self.wait_on_air("HA restart", t)
        self.on_air_figure("after an HA restart (from its launch)", took, first, problems,
                           f"; HA's launch to RUNNING {ha_up:.1f} s, its stop {stopped:.1f} s")

        self.broker.stop()
        # HA's own view of the outage: its MQTT entities go unavailable when it loses the broker
        ok, _ = live.wait_until("unavailable", lambda: (any(w for w in self.look().values()), None), timeout=15, interval=0.2)
        t = self.broker.start()
        took, first, problems = self.wait_on_air("broker restart", t)
        self.on_air_figure("after a broker restart, nothing retained (from its start)", took, first, problems,
                           "" if ok else "; HA never showed them unavailable while it was down")

        settle = 20
        say(f"settling {settle} s before the idle window")
        time.sleep(settle)
        self.idle()


def main():
    args, n, idle_s, keep = sys.argv[1:], 40, 120, False
    try:
        while args:
            a = args.pop(0)
            if a == "-n":
                n = int(args.pop(0))
            elif a == "--idle-s":
                idle_s = int(args.pop(0))
            elif a == "--keep":
                keep = True
            else:
                raise ValueError(a)
    except (ValueError, IndexError):
        print("usage: bench-monitors.py [-n N] [--idle-s S] [--keep]", file=sys.stderr)
        return 2
    if n < 1 or idle_s < 60 or idle_s % 60:
        print("bench-monitors.py: -n at least 1; --idle-s a multiple of 60", file=sys.stderr)
        return 2
    binary = os.environ.get("ALTBEACOND_BIN")
    if not binary or not os.access(binary, os.X_OK):
        print("bench-monitors.py: set ALTBEACOND_BIN to the altbeacond binary", file=sys.stderr)
        return 1
    for tool in ("mosquitto", "mosquitto_passwd"):
        if not shutil.which(tool):
            print(f"bench-monitors.py: {tool} is missing (Debian's mosquitto)", file=sys.stderr)
            return 1
    bench = Bench(os.path.abspath(binary), n, idle_s, keep)
    rc = 0
    try:
        bench.run()
    except CannotRun as e:
        print(f"{PREFIX} could not run: {e}", file=sys.stderr)
        rc = 1
    except Exception as e:  # noqa: BLE001 — said, with where its files are
        print(f"{PREFIX} could not run: {type(e).__name__}: {e}", file=sys.stderr)
        rc = 1
    finally:
        bench.stop_daemons.set()
        bench.procs.stop_all()
        bench.broker.close()
    figure(f"the whole benchmark took {time.monotonic() - T0:.0f} s")
    if rc or keep:
        say(f"files kept in {bench.dir}")
    else:
        shutil.rmtree(bench.dir, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())

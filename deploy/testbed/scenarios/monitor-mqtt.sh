# timeout: 360
# SPEC §10, the observer: `altbeacond monitor` on hci1 expecting two beacons, A (altbeacond on
# hci0) and B (a second altbeacond on hci2), with Debian's mosquitto broker (user and password)
# and the Prometheus text file. A password file every user can read: refused at start (exit 78).
# B stopped: silent after silent_after_s in the log, the metrics and MQTT, and its unchanged state
# said again by the 30 s refresh (HA's expire_after never fires while the monitor is up); B
# started again: heard. Home Assistant discovery (the observer a device of its own, each beacon a
# device named by its frame identity, without via_device, which the local beacon A's device names
# too; the IDs of earlier versions cleared) retained and sent again after a birth message.
# monitor.toml edited while it runs (issue 38): a refused edit said once and the running config
# kept; b removed, then the node renamed: their retained discovery and state cleared from the
# broker, what was announced kept in the state directory; SIGHUP reads it again. The will
# (offline, under the new node) after kill -9. node_exporter serves the beacon's and the monitor's
# text files side by side; promtool finds nothing. Then `monitor --once` on hci0, the beacon A's
# own controller: it hears B (exit 0) while A stays on air with no re-arm, and exits 2 for a
# beacon that is not there.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/session-lib.sh"
tbs_btvirt3 le || tb_fail "btvirt with three controllers did not start"
ip link set lo up
TF=/tmp/textfile
mkdir -p "$TF" /tmp/rb
SILENT=12
HEX_B=$(tbs_rig_hex 3 4)

# The broker, with a user and a password.
printf 'listener 1883 127.0.0.1\nallow_anonymous false\npassword_file /tmp/mosquitto.passwd\n' >/tmp/mosquitto.conf
: >/tmp/mosquitto.passwd
mosquitto_passwd -b /tmp/mosquitto.passwd mon s3cret || tb_fail "mosquitto_passwd"
printf 's3cret\n' >/tmp/mqtt-password
chmod 0644 /tmp/mqtt-password
mosquitto -c /tmp/mosquitto.conf >/tmp/mosquitto.log 2>&1 &
for ((i = 0; i < 50; i++)); do mosquitto_sub -u mon -P s3cret -t x -W 1 -C 1 >/dev/null 2>&1; [ $? != 27 ] || break; _tb_sleep 0.1; done
sub() { mosquitto_sub -u mon -P s3cret "$@"; }
# retained TOPIC: the retained message on TOPIC (waits 3 s at most)
retained() { sub -t "$1" -C 1 -W 3 2>/dev/null; }
mosquitto_sub -u mon -P s3cret -v -t 'altbeacond/#' -t 'homeassistant/#' >/tmp/mqtt.log 2>&1 &
# discovery under the ID before the escaping, and under the one before issue 38, as older monitors
# left them: cleared at connect
mosquitto_pub -u mon -P s3cret -r -t homeassistant/binary_sensor/altbeacond_testnode_b/connectivity/config -m '{"name":"old"}'
mosquitto_pub -u mon -P s3cret -r -t homeassistant/binary_sensor/altbeacond__testnode__b/connectivity/config -m '{"name":"old"}'
# the monitor's state directory (systemd's StateDirectory= passes it so): what it announced
STATE=/tmp/monitor-state
rm -rf "$STATE" && mkdir -p "$STATE"

# Beacon A on hci0 (with its own text file), beacon B on hci2 (its own runtime directory).
tbd_config "[metrics]" "textfile = \"$TF/altbeacond.prom\""
tbd_start
printf '[beacon]\nuuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"\nmajor = 3\nminor = 4\n[bluetooth]\nadapter = "hci2"\n' >/tmp/b.toml
start_b() { RUNTIME_DIRECTORY=/tmp/rb "$ALTBEACOND_BIN" run --config /tmp/b.toml >>/tmp/b.log 2>&1 & B_PID=$!; }
start_b
tb_wait_heard "$HEX_B" 15000 >/dev/null || { cat /tmp/b.log; tb_fail "beacon B not heard"; }

cat >/tmp/monitor.toml <<TOML
[monitor]
adapter = "hci1"
silent_after_s = $SILENT
rescan_s = 1
node = "testnode"
[expect.a]
type = "altbeacon"
uuid = "2F234454CF6D4A0FADF2F4911BA9FFA6"
major = 1
minor = 2
[expect.b]
type = "altbeacon"
uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
major = 3
minor = 4
[metrics]
textfile = "$TF/altbeacond-monitor.prom"
[mqtt]
host = "127.0.0.1"
username = "mon"
password_file = "/tmp/mqtt-password"
keepalive_s = 10
TOML
# A secret every user can read is refused at start, plainly (as ssh refuses such a key).
"$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml >/tmp/monitor.log 2>&1 </dev/null; rc=$?
[ "$rc" = 78 ] && grep -q "the MQTT password file /tmp/mqtt-password is open to every user (mode 0644): refused (chmod o-rwx /tmp/mqtt-password)" /tmp/monitor.log \
  || { cat /tmp/monitor.log; tb_fail "a world-readable password file: exit $rc"; }
chmod 0600 /tmp/mqtt-password
STATE_DIRECTORY=$STATE "$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml >/tmp/monitor.log 2>&1 </dev/null &
MON=$!
mlog() { cat /tmp/monitor.log; }
wait_mlog() {  # PATTERN COUNT TIMEOUT_S: until the monitor's log has COUNT lines matching PATTERN
  local i
  for ((i = 0; i < $3 * 20; i++)); do [ "$(grep -c "$1" /tmp/monitor.log)" -ge "$2" ] && return 0; _tb_sleep 0.05; done
  return 1
}
wait_mlog "beacon a heard" 1 20 && wait_mlog "beacon b heard" 1 20 || { mlog; tb_fail "the monitor did not hear both beacons"; }
wait_mlog "MQTT: connected to 127.0.0.1:1883" 1 10 || { mlog; cat /tmp/mosquitto.log; tb_fail "the monitor did not connect to the broker"; }
[ "$(retained altbeacond/testnode/status)" = online ] || tb_fail "status is not online"
# retained_json TOPIC CONDITION WHAT: TOPIC's retained JSON (d) satisfies the Python CONDITION
retained_json() {
  local v
  v=$(retained "$1")
  python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert $2, d" "$v" || tb_fail "$3: $v"
}
retained_json altbeacond/testnode/beacons/b 'd["heard"] is True and d["adverts"] >= 1 and d["last_seen"] > 0 and "rssi" in d' "beacon b's topic"
retained_json homeassistant/binary_sensor/altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__3__4/connectivity/config \
  'd["device_class"]=="connectivity" and d["state_topic"]=="altbeacond/testnode/beacons/b" and d["availability_topic"]=="altbeacond/testnode/status" and d["expire_after"]==120 and d["device"]["identifiers"]==["altbeacond_frame__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__3__4"] and "via_device" not in d["device"] and d["device"]["model"]=="Beacon (UUID, major, minor)" and d["device"]["name"]=="Beacon 3/4 2f234454" and d["name"]=="Heard by testnode" and d["unique_id"]=="altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__3__4__connectivity"' \
  "discovery of b"
retained_json homeassistant/binary_sensor/altbeacond__testnode/monitor/config \
  'd["state_topic"]=="altbeacond/testnode/status" and d["device"]["identifiers"]==["altbeacond__testnode"]' "the observer's discovery"
[ -z "$(retained homeassistant/binary_sensor/altbeacond_testnode_b/connectivity/config)" ] || tb_fail "the discovery under the old ID is still retained"
[ -z "$(retained homeassistant/binary_sensor/altbeacond__testnode__b/connectivity/config)" ] || tb_fail "the discovery under the ID before issue 38 is still retained"
retained_json altbeacond/testnode/observer 'd["adapter"]=="hci1" and d["scanning"] is True and d["beacons_expected"]==2' "observer topic"
retained_json altbeacond/testnode/health 'd["health"]=="on-air"' "health topic"
# Issue 32: beacon A (the daemon on this machine) as a device of its own, read from its status file
retained_json altbeacond/testnode/beacon \
  'd["on_air"] is True and d["health"]=="on-air" and d["phase"]=="advertising" and d["adapter"]=="hci0" and d["frames_on_air"]=="altbeacon" and d["rearms"]==0 and d["config_refused"] is False and d["started"].endswith("+00:00") and d["version"]' \
  "the local beacon's topic"
# issue 48: when the daemon started, on a topic of its own (the Started timestamp sensor)
retained altbeacond/testnode/beacon/started | grep -Eq '^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\+00:00$' \
  || tb_fail "no RFC 3339 start time on altbeacond/testnode/beacon/started: $(retained altbeacond/testnode/beacon/started)"
# its device also carries the identity of its AltBeacon, which [expect.a] is: one device in HA
retained_json homeassistant/binary_sensor/altbeacond_beacon__testnode/on_air/config \
  'd["state_topic"]=="altbeacond/testnode/beacon" and d["device"]["identifiers"]==["altbeacond_beacon__testnode","altbeacond_frame__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2"] and d["device"]["via_device"]=="altbeacond__testnode" and [c[0] for c in d["device"]["connections"]]==["bluetooth"] and len(d["device"]["connections"][0][1])==17' "the local beacon's discovery (issue 48: its Bluetooth address, the kernel's, as a connection)"
retained_json homeassistant/sensor/altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/rssi/config \
  'd["device"]["identifiers"]==["altbeacond_frame__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2"] and d["name"]=="testnode RSSI"' "discovery of a"
[ -z "$(retained homeassistant/sensor/altbeacond__testnode/beacon_health/config)" ] || tb_fail "the observer's old Beacon health entity is still retained"
tb_promtool <"$TF/altbeacond-monitor.prom" >/tmp/promtool.txt 2>&1 || { cat /tmp/promtool.txt "$TF/altbeacond-monitor.prom"; tb_fail "promtool: the monitor's text file"; }
grep -q '^altbeacond_beacon_heard{beacon="b"} 1$' "$TF/altbeacond-monitor.prom" || { cat "$TF/altbeacond-monitor.prom"; tb_fail "b not heard in the metrics"; }

# B stops: silent after SILENT s (log, metrics, MQTT).
t0=$(tb_now_ms)
kill "$B_PID"; wait "$B_PID"
wait_mlog "beacon b silent" 1 $((SILENT + 15)) || { mlog; tb_fail "b was not reported silent"; }
silent_ms=$(( $(tb_now_ms) - t0 ))
[ "$silent_ms" -ge $(( (SILENT - 6) * 1000 )) ] || { mlog; tb_fail "b silent after $silent_ms ms, before silent_after_s"; }
grep -q '^altbeacond_beacon_heard{beacon="b"} 0$' "$TF/altbeacond-monitor.prom" || { cat "$TF/altbeacond-monitor.prom"; tb_fail "b still heard in the metrics"; }
grep -q '^altbeacond_beacon_heard{beacon="a"} 1$' "$TF/altbeacond-monitor.prom" || { mlog; cat "$TF/altbeacond-monitor.prom"; tbd_dump; tb_fail "a not heard in the metrics while b is silent"; }
retained_json altbeacond/testnode/beacons/b 'd["heard"] is False' "b's topic while silent"
# Unchanged while silent, yet said again within the 30 s refresh: HA's expire_after never fires.
said() { grep -c "^altbeacond/testnode/beacons/b .*\"heard\":false" /tmp/mqtt.log; }
n0=$(said)
for ((i = 0; i < 400; i++)); do [ "$(said)" -gt "$n0" ] && break; _tb_sleep 0.1; done
[ "$(said)" -gt "$n0" ] || tb_fail "b's unchanged state was not said again within 40 s"

# B again: heard.
start_b
wait_mlog "beacon b heard again" 1 20 || { mlog; tb_fail "b was not heard again"; }
for ((i = 0; i < 30; i++)); do j=$(retained altbeacond/testnode/beacons/b); case "$j" in *'"heard":true'*) break ;; esac; _tb_sleep 0.1; done
case "$j" in *'"heard":true'*) ;; *) tb_fail "b's topic after it came back: $j" ;; esac
[ "$(grep -c "beacon .* heard\|beacon .* silent" /tmp/monitor.log)" = 4 ] || { mlog; tb_fail "not one log line per change"; }

# Home Assistant's birth message: discovery again.
n0=$(grep -c '^homeassistant/binary_sensor/altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/connectivity/config ' /tmp/mqtt.log)
mosquitto_pub -u mon -P s3cret -t homeassistant/status -m online
wait_mlog "Home Assistant is online" 1 5 || { mlog; tb_fail "the birth message was not noticed"; }
for ((i = 0; i < 30; i++)); do [ "$(grep -c '^homeassistant/binary_sensor/altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/connectivity/config ' /tmp/mqtt.log)" -gt "$n0" ] && break; _tb_sleep 0.1; done
[ "$(grep -c '^homeassistant/binary_sensor/altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/connectivity/config ' /tmp/mqtt.log)" -gt "$n0" ] || tb_fail "discovery not sent again"

# Both text files side by side, as node_exporter serves them.
/usr/bin/prometheus-node-exporter --web.listen-address=127.0.0.1:9100 --collector.disable-defaults --collector.textfile \
  --collector.textfile.directory="$TF" >/tmp/node-exporter.log 2>&1 &
for ((i = 0; i < 100; i++)); do curl -sf http://127.0.0.1:9100/metrics >/tmp/scrape.txt 2>/dev/null && break; _tb_sleep 0.1; done
grep -q '^node_textfile_scrape_error 0$' /tmp/scrape.txt || { grep textfile /tmp/scrape.txt; cat /tmp/node-exporter.log; tb_fail "node_exporter could not read both files"; }
grep -q '^altbeacond_beacon_heard{beacon="b"} 1$' /tmp/scrape.txt && grep -q '^altbeacond_on_air 1$' /tmp/scrape.txt || tb_fail "node_exporter does not serve both"

# Issue 38: monitor.toml edited while the monitor runs. A refused edit: said once, the config kept.
cp /tmp/monitor.toml /tmp/monitor.good
printf '[bogus]\n' >>/tmp/monitor.toml
wait_mlog "monitor config edit refused, keeping the running one: /tmp/monitor.toml:" 1 5 || { mlog; tb_fail "a refused edit not said"; }
touch /tmp/monitor.toml; _tb_sleep 1
[ "$(grep -c "monitor config edit refused" /tmp/monitor.log)" = 1 ] || { mlog; tb_fail "a refused edit said more than once"; }
# b removed (a save by rename), then the node renamed.
announced=$(ls "$STATE"/monitor-announced-* 2>/dev/null)
[ -n "$announced" ] && grep -qx altbeacond/testnode/beacons/b "$announced" || { ls -l "$STATE"; mlog; tb_fail "what was announced is not kept in the state directory"; }
sed '/^\[expect.b\]/,/^minor = 4$/d' /tmp/monitor.good >/tmp/monitor.new && mv /tmp/monitor.new /tmp/monitor.toml
wait_mlog "monitor config accepted again" 1 5 && wait_mlog "monitor config applied: /tmp/monitor.toml: node testnode; expecting a;" 1 5 || { mlog; tb_fail "b's removal not applied"; }
for ((i = 0; i < 30; i++)); do [ -z "$(retained homeassistant/binary_sensor/altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__3__4/connectivity/config)" ] && break; _tb_sleep 0.1; done
[ -z "$(retained homeassistant/binary_sensor/altbeacond__testnode__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__3__4/connectivity/config)" ] || tb_fail "b's discovery still retained after its removal"
sed -i 's/^node = "testnode"/node = "renamed"/' /tmp/monitor.toml
wait_mlog "node renamed (was testnode)" 1 5 && wait_mlog "MQTT: \[mqtt\] or the node changed: connecting again" 1 5 || { mlog; tb_fail "the rename not applied"; }
for ((i = 0; i < 50; i++)); do [ "$(retained altbeacond/renamed/status)" = online ] && break; _tb_sleep 0.1; done
[ "$(retained altbeacond/renamed/status)" = online ] || { mlog; tb_fail "the renamed node is not online"; }
retained_json homeassistant/binary_sensor/altbeacond__renamed__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2/connectivity/config 'd["name"]=="Heard by renamed"' "a under the new node"
# The old node's discovery at once, its state topics at the next refresh (30 s): nothing retained.
for ((i = 0; i < 40; i++)); do
  left=$(timeout 2 mosquitto_sub -u mon -P s3cret -v -t 'altbeacond/testnode/#' -t 'homeassistant/+/+/+/config' -W 1 2>/dev/null | grep -E '^altbeacond/testnode/|__testnode|__3__4' | cut -d' ' -f1)
  [ -z "$left" ] && break
  _tb_sleep 0.2
done
[ -z "$left" ] || { mlog; tb_fail "left on the broker after the edits: $left"; }
grep -q testnode "$announced" && { cat "$announced"; tb_fail "the state file still names the old node"; }
grep -qx altbeacond/renamed/beacons/a "$announced" || { cat "$announced"; tb_fail "the state file does not name the new node's topics"; }
kill -HUP "$MON"
wait_mlog "SIGHUP: reading /tmp/monitor.toml again" 1 5 || { mlog; tb_fail "SIGHUP not taken"; }
! grep -q "restart it to apply" /tmp/monitor.log || tb_fail "SIGHUP still says a restart is needed"

# kill -9: the broker publishes the will.
kill -KILL "$MON"; wait "$MON" 2>/dev/null
for ((i = 0; i < 50; i++)); do [ "$(retained altbeacond/renamed/status)" = offline ] && break; _tb_sleep 0.1; done
[ "$(retained altbeacond/renamed/status)" = offline ] || tb_fail "the will was not published after kill -9"

# monitor --once on hci0, beside beacon A on the same controller.
sed -e 's/adapter = "hci1"/adapter = "hci0"/' -e '/^\[expect.a\]/,/^minor = 2$/d' -e '/^\[mqtt\]/,$d' -e '/^\[metrics\]/,/^textfile/d' /tmp/monitor.good >/tmp/once.toml
"$ALTBEACOND_BIN" monitor --config /tmp/once.toml --once --timeout 8 >/tmp/once.txt 2>&1; rc=$?
[ "$rc" = 0 ] || { cat /tmp/once.toml /tmp/once.txt; tb_fail "monitor --once on hci0 exited $rc"; }
grep -q "^b .*heard" /tmp/once.txt || { cat /tmp/once.txt; tb_fail "the --once table"; }
tb_wait_heard "$TB_RIG_HEX" 3000 >/dev/null || tb_fail "beacon A not on air beside the monitor"
grep -q "re-arm\|interference\|overwritten\|disabled by" /tmp/altbeacond.log && { tbd_dump; tb_fail "beacon A took the monitor's scan for interference"; }
printf '[monitor]\nadapter = "hci0"\n[expect.nobody]\ntype = "ibeacon"\nuuid = "00000000-0000-0000-0000-000000000001"\nmajor = 9\nminor = 9\n' >/tmp/none.toml
"$ALTBEACOND_BIN" monitor --config /tmp/none.toml --once --timeout 3 >/tmp/none.txt 2>&1; rc=$?
[ "$rc" = 2 ] || { cat /tmp/none.txt; tb_fail "monitor --once exited $rc for a missing beacon"; }
printf '[monitor]\nadapter = "hci7"\n[expect.nobody]\ntype = "ibeacon"\nuuid = "00000000-0000-0000-0000-000000000001"\nmajor = 9\nminor = 9\n' >/tmp/noad.toml
"$ALTBEACOND_BIN" monitor --config /tmp/noad.toml --once --timeout 3 >/tmp/noad.txt 2>&1; rc=$?
[ "$rc" = 3 ] || { cat /tmp/noad.txt; tb_fail "monitor --once exited $rc without an adapter"; }
kill "$B_PID" 2>/dev/null; wait "$B_PID" 2>/dev/null
tbd_finish
tb_pass "monitor on hci1: a world-readable password file refused (exit 78); a and b heard, observer device, each beacon's device by its frame identity (a's the local beacon's too), the old discovery IDs cleared; monitor.toml edited while it runs: a refusal said once, b removed and the node renamed, everything of theirs cleared from the broker, the state file kept, SIGHUP read it again; MQTT (user/password) retained status/beacons/health and HA discovery, the local beacon as a device of its own, b silent $silent_ms ms after it stopped (silent_after_s $SILENT) in log, metrics and MQTT, its unchanged state said again by the refresh, heard again; discovery re-sent on the birth message; will after kill -9; node_exporter served both text files (scrape error 0), promtool clean; --once beside beacon A on hci0: exit 0 (A not disturbed), 2 for a missing beacon, 3 without the adapter"

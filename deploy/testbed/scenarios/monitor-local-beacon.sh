# timeout: 180
# Issue 32, Deliver 1: on the beacon's own Pi, `altbeacond monitor` with [mqtt] and no [expect]
# tables publishes the local beacon daemon as a Home Assistant device of its own, from its status
# file, and scans nothing (no Bluetooth socket: the adapter stays the beacon's alone). An edit the
# daemon refuses shows as Config refused (with the FILE:LINE:COL message); the daemon stopped:
# health not-running (issue 38: never HA's reserved unknown), off air, every value null; `--once`
# is refused (nothing to scan for). Issue 38: the local beacon's device also carries its AltBeacon's
# identity (a monitor elsewhere expecting it adds its entities to this device), via the observer.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
ip link set lo up
printf 'listener 1883 127.0.0.1\nallow_anonymous true\n' >/tmp/mosquitto.conf
mosquitto -c /tmp/mosquitto.conf >/tmp/mosquitto.log 2>&1 &
for ((i = 0; i < 50; i++)); do mosquitto_sub -t x -W 1 -C 1 >/dev/null 2>&1; [ $? != 27 ] || break; _tb_sleep 0.1; done
retained() { mosquitto_sub -t "$1" -C 1 -W 3 2>/dev/null; }
local_is() { tbd_local_is pi1 "$@"; }

tbd_config
tbd_start
printf '[monitor]\nnode = "pi1"\n[mqtt]\nhost = "127.0.0.1"\nkeepalive_s = 10\n' >/tmp/monitor.toml
"$ALTBEACOND_BIN" monitor --check --config /tmp/monitor.toml >/tmp/check.txt 2>&1 || { cat /tmp/check.txt; tb_fail "[mqtt] alone refused by monitor --check"; }
"$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml --once >/tmp/once.txt 2>&1; rc=$?
[ "$rc" = 78 ] && grep -q 'expects no beacon: --once needs \[expect.NAME\] tables' /tmp/once.txt || { cat /tmp/once.txt; tb_fail "--once without [expect]: exit $rc"; }

"$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml >/tmp/monitor.log 2>&1 </dev/null &
MON=$!
local_is 'd["on_air"] is True and d["health"] == "on-air" and d["phase"] == "advertising" and d["adapter"] == "hci0" and d["frames_on_air"] == "altbeacon" and d["config_refused"] is False and d["version"]' 15 \
  || tb_fail "the local beacon not published on air"
d=$(retained homeassistant/sensor/altbeacond_beacon__pi1/health/config)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["state_topic"]=="altbeacond/pi1/beacon" and d["device"]["name"]=="Beacon 1/2 2f234454" and d["device"]["identifiers"][0]=="altbeacond_beacon__pi1" and d["device"]["identifiers"][1:]==["altbeacond_frame__altbeacon__2f234454-cf6d-4a0f-adf2-f4911ba9ffa6__1__2"] and d["device"]["via_device"]=="altbeacond__pi1" and d["device"]["manufacturer"]=="altbeacond" and d["options"]==["on-air","degraded","off-air","not-running","stale","unreadable"] and d["origin"]["sw_version"] and d["device"]["sw_version"], d' "$d" \
  || tb_fail "the local beacon's discovery: $d"
grep -q 'no \[expect\] tables, so no scan' /tmp/monitor.log || { cat /tmp/monitor.log; tb_fail "not said that nothing is scanned"; }
! grep -q 'scanning on' /tmp/monitor.log || { cat /tmp/monitor.log; tb_fail "the monitor scanned"; }
# No Bluetooth socket at all (the kernel lists AF_BLUETOOTH sockets in /proc/net/hci and /proc/net/l2cap, by inode)
inodes=$(find "/proc/$MON/fd" -lname 'socket:*' -printf '%l\n' | tr -dc '0-9\n')
for n in $inodes; do
  ! grep -qs " $n " /proc/net/hci /proc/net/l2cap || tb_fail "the monitor holds a Bluetooth socket (inode $n)"
done
# The control: the beacon daemon's own HCI sockets are found that way.
found=0
for n in $(find "/proc/$TB_DAEMON_PID/fd" -lname 'socket:*' -printf '%l\n' | tr -dc '0-9\n'); do
  grep -qs " $n " /proc/net/hci && found=1
done
[ "$found" = 1 ] || { cat /proc/net/hci; tb_fail "control: the daemon's HCI sockets are not in /proc/net/hci"; }

# An edit the daemon refuses: Config refused, with the daemon's own message; still on air.
sed -i 's/^major = .*/major = 70000/' "$TBD_CONFIG"
tbd_wait_log "c.toml:3:9" 5 || { tbd_dump; tb_fail "refused edit not logged"; }
local_is 'd["config_refused"] is True and "c.toml:3:9" in d["refused_edit"] and d["on_air"] is True and d["health"] == "degraded"' 45 \
  || tb_fail "the refused edit not published"
# The daemon stopped: not-running and off air, every value null (the monitor itself stays up).
tbd_finish
local_is 'd["health"] == "not-running" and d["on_air"] is False and d["phase"] is None and d["adapter"] is None and d["version"] is None' 45 || tb_fail "the stopped daemon not published"
kill -0 "$MON" || tb_fail "the monitor exited"
tb_log "$(retained altbeacond/pi1/beacon)"
kill "$MON"; wait "$MON"
[ "$(retained altbeacond/pi1/status)" = offline ] || tb_fail "status not offline after the monitor stopped"
tb_pass "[mqtt] alone: no scan and no Bluetooth socket; the local beacon on air, its refused edit, its stop, each published with its HA discovery; --once refused"

# init: systemd
# timeout: 240
# SPEC §10 under the monitor's own unit (deploy/altbeacond-monitor.service, installed by
# deploy/install, not enabled): its user, two capabilities, AF_INET for MQTT and nothing more
# network-wise, SystemCallFilter=, ProtectSystem=strict with node_exporter's directory writable.
# Beside altbeacond.service on the same machine: the monitor on hci1 hears the beacon on hci0,
# STATUS= says so, the retained MQTT topics (user and password from a file only the altbeacond
# group reads) and the text file are there, nothing is refused by the sandbox; `systemctl stop`
# publishes `offline`.
. "$TB_REPO/deploy/testbed/lib.sh"
prop() { systemctl show -P "$1" altbeacond-monitor.service; }
journal() { journalctl -b -u altbeacond-monitor.service --no-pager -o cat | tail -n "${1:-30}"; }
fail() { echo "--- journal:"; journal 40; tb_fail "$*"; }
wait_for() {  # SECONDS COMMAND...: until COMMAND succeeds
  local s=$1 i; shift
  for ((i = 0; i < s * 10; i++)); do "$@" && return 0; _tb_sleep 0.1; done
  return 1
}
[ "$(systemctl is-enabled altbeacond-monitor.service 2>/dev/null)" = disabled ] || fail "the monitor's unit is not installed disabled"
wait_for 30 test "$(systemctl show -P ActiveState altbeacond.service)" = active || fail "altbeacond.service is not active"
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || fail "beacon not heard"

ip link set lo up
printf 'listener 1883 127.0.0.1\nallow_anonymous false\npassword_file /tmp/mosquitto.passwd\n' >/tmp/mosquitto.conf
: >/tmp/mosquitto.passwd
mosquitto_passwd -b /tmp/mosquitto.passwd mon s3cret || fail "mosquitto_passwd"
mosquitto -c /tmp/mosquitto.conf >/tmp/mosquitto.log 2>&1 &
retained() { mosquitto_sub -u mon -P s3cret -t "$1" -C 1 -W 3 2>/dev/null; }
install -m 0640 -g altbeacond /dev/null /etc/altbeacond/mqtt-password
printf 's3cret\n' >/etc/altbeacond/mqtt-password
TF=/var/lib/prometheus/node-exporter
mkdir -p "$TF"; chgrp altbeacond "$TF"; chmod g+w "$TF"
cat >/etc/altbeacond/monitor.toml <<TOML
[monitor]
adapter = "hci1"
silent_after_s = 15
rescan_s = 1
node = "sandboxed"
[expect.rig]
type = "altbeacon"
uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
major = 1
minor = 2
[metrics]
textfile = "$TF/altbeacond-monitor.prom"
[mqtt]
host = "127.0.0.1"
username = "mon"
password_file = "/etc/altbeacond/mqtt-password"
TOML
systemctl start altbeacond-monitor.service || fail "systemctl start altbeacond-monitor failed"
wait_for 30 test "$(prop ActiveState)" = active || fail "altbeacond-monitor.service is $(prop ActiveState)/$(prop SubState)"
wait_for 20 eval 'case "$(prop StatusText)" in *"1 of 1 expected beacons heard"*) true ;; *) false ;; esac' || fail "STATUS= is '$(prop StatusText)'"
st=$(prop StatusText)
wait_for 10 eval '[ "$(retained altbeacond/sandboxed/status)" = online ]' || fail "status topic is not online"
j=$(retained altbeacond/sandboxed/beacons/rig)
case "$j" in *'"heard":true'*) ;; *) fail "the beacon's topic: $j" ;; esac
h=$(retained altbeacond/sandboxed/health)
case "$h" in *'"health":"on-air"'*) ;; *) fail "the health topic (altbeacond.service's status file): $h" ;; esac
grep -q '^altbeacond_beacon_heard{beacon="rig"} 1$' "$TF/altbeacond-monitor.prom" || { cat "$TF/altbeacond-monitor.prom"; fail "the text file"; }
user=$(ps -o user= -p "$(prop MainPID)")
[ "$user" = altbeacond ] || fail "the monitor runs as $user"
journal 60 | grep -qi "permission denied\|EPERM\|not permitted\|refused" && fail "something was refused under the sandbox"
tb_wait_heard "$TB_RIG_HEX" 3000 >/dev/null || fail "the beacon is not on air beside the monitor"
# Issue 38: what it announced, kept in its StateDirectory= (shared with altbeacond.service), its own
ann=/var/lib/altbeacond/monitor-announced
wait_for 10 test -s "$ann" || fail "no $ann"
[ "$(stat -c '%U %a' "$ann")" = "altbeacond 600" ] || fail "$ann: $(stat -c '%U %a' "$ann")"
grep -qx altbeacond/sandboxed/beacons/rig "$ann" || { cat "$ann"; fail "$ann does not name the beacon's topic"; }
# systemctl reload: monitor.toml read again (SIGHUP), no restart
pid=$(prop MainPID)
systemctl reload altbeacond-monitor.service || fail "systemctl reload altbeacond-monitor failed"
wait_for 5 eval 'journal 10 | grep -q "SIGHUP: reading /etc/altbeacond/monitor.toml again"' || fail "reload not taken"
[ "$(prop MainPID)" = "$pid" ] || fail "reload restarted the monitor"
systemctl stop altbeacond-monitor.service
wait_for 10 eval '[ "$(retained altbeacond/sandboxed/status)" = offline ]' || fail "not offline after systemctl stop"
tb_pass "under altbeacond-monitor.service (user $user, installed disabled): STATUS='$st'; MQTT status/beacon/health topics with a password from a group-readable file; text file in node_exporter's directory; what it announced kept in its StateDirectory (altbeacond 0600); systemctl reload read monitor.toml again; offline after stop; the beacon on air beside it"

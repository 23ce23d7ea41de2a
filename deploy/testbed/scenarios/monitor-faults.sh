# timeout: 240
# SPEC §10, bad input for the monitor: wrong MQTT credentials, a broker that goes away and comes
# back, a full disk under the text file, the controllers gone and back. Each is one clear log
# line (not one per retry), retried with back-off, and the scan goes on meanwhile: a beacon stopped during the faults is still
# reported silent, and heard again.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
ip link set lo up
printf 'listener 1883 127.0.0.1\nallow_anonymous false\npassword_file /tmp/mosquitto.passwd\n' >/tmp/mosquitto.conf
: >/tmp/mosquitto.passwd
mosquitto_passwd -b /tmp/mosquitto.passwd mon s3cret || tb_fail "mosquitto_passwd"
start_broker() { mosquitto -c /tmp/mosquitto.conf >>/tmp/mosquitto.log 2>&1 & BROKER=$!; _tb_sleep 0.5; }
start_broker
printf 'wrong\n' >/tmp/mqtt-password
chmod 0600 /tmp/mqtt-password
# A full disk: the text file on a tmpfs of 16 KiB, filled up.
mkdir -p /tmp/tf && mount -t tmpfs -o size=16k tmpfs /tmp/tf
head -c 16384 /dev/zero >/tmp/tf/filler 2>/dev/null
tbd_config
tbd_start
cat >/tmp/monitor.toml <<TOML
[monitor]
adapter = "hci1"
silent_after_s = 8
rescan_s = 1
node = "faults"
[expect.rig]
type = "altbeacon"
uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
major = 1
minor = 2
[metrics]
textfile = "/tmp/tf/monitor.prom"
[mqtt]
host = "127.0.0.1"
username = "mon"
password_file = "/tmp/mqtt-password"
keepalive_s = 5
TOML
"$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml >/tmp/monitor.log 2>&1 </dev/null &
MON=$!
mlog() { cat /tmp/monitor.log; }
count() { grep -c "$1" /tmp/monitor.log; }
wait_count() {  # PATTERN N TIMEOUT_S: until more than N lines match
  local i
  for ((i = 0; i < $3 * 20; i++)); do [ "$(count "$1")" -gt "$2" ] && return 0; _tb_sleep 0.05; done
  return 1
}
wait_count "beacon rig heard" 0 15 || { mlog; tb_fail "the beacon was not heard with the faults"; }
# Wrong credentials and a full disk: one line each, after several attempts.
wait_count "the broker refused the connection: .*(check \[mqtt\] username and password_file)" 0 10 || { mlog; tb_fail "wrong credentials not reported"; }
wait_count "No space left on device" 0 10 || { mlog; tb_fail "the full disk not reported"; }
sleep 8
[ "$(count "the broker refused the connection")" = 1 ] || { mlog; tb_fail "wrong credentials said more than once"; }
[ "$(count "No space left on device")" = 1 ] || { mlog; tb_fail "the full disk said more than once"; }
tries=$(grep -c "not authorised" /tmp/mosquitto.log)
[ "$tries" -ge 3 ] || { cat /tmp/mosquitto.log; tb_fail "only $tries attempts with the wrong password"; }
# The scan goes on: the beacon stopped meanwhile is reported silent.
tbd_finish
wait_count "beacon rig silent" 0 15 || { mlog; tb_fail "silence not reported during the faults"; }
# Fixed: the password file is read again at the next attempt; the disk has room again.
printf 's3cret\n' >/tmp/mqtt-password
rm /tmp/tf/filler
wait_count "MQTT: connected to 127.0.0.1:1883 again" 0 70 || { mlog; tb_fail "not connected after the password was fixed"; }
wait_count "written again" 0 70 || { mlog; tb_fail "the text file was not written again"; }
grep -q '^altbeacond_beacon_heard{beacon="rig"} 0$' /tmp/tf/monitor.prom || { cat /tmp/tf/monitor.prom; tb_fail "the text file does not say silent"; }
# The broker goes away: one line; back: connected again; the beacon back: heard again.
kill "$BROKER"; wait "$BROKER" 2>/dev/null
wait_count "MQTT: 127.0.0.1:1883: " 1 15 || { mlog; tb_fail "the broker's loss not reported"; }
tbd_start
wait_count "beacon rig heard again" 0 15 || { mlog; tb_fail "the beacon not heard again while the broker is away"; }
start_broker
wait_count "MQTT: connected to 127.0.0.1:1883 again" 1 40 || { mlog; tb_fail "not connected again after the broker came back"; }
j=$(mosquitto_sub -u mon -P s3cret -t altbeacond/faults/beacons/rig -C 1 -W 3)
case "$j" in *'"heard":true'*) ;; *) tb_fail "the beacon's topic after the broker came back: $j" ;; esac
# The controllers gone (btvirt killed) and back: the monitor waits and scans again by itself.
scans=$(count "scanning on hci1")
tb_fault_remove
wait_count "scanning again with back-off" 0 15 || { mlog; tb_fail "the adapter's loss not reported"; }
tb_fault_return
wait_count "scanning on hci1" "$scans" 30 || { mlog; tb_fail "the monitor did not scan again when the adapter came back"; }
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || { tbd_dump; tb_fail "the beacon did not come back"; }
kill "$MON"; wait "$MON"; rc=$?
[ "$rc" = 0 ] || { mlog; tb_fail "the monitor exited $rc after SIGTERM"; }
tbd_finish
umount /tmp/tf
tb_pass "wrong credentials: one line for $tries refused attempts; full disk: one line; the scan went on (silent reported); fixed: connected again and the text file written again; broker gone: one line, the beacon heard again meanwhile, connected again when it came back; controllers gone and back: scanning again by itself; SIGTERM: exit 0"

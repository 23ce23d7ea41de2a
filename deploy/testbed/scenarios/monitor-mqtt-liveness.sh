# timeout: 300
# arch: amd64
# (x86_64 only: keep-alive timing, the node and client-ID clash and a fake broker are the pure
# MQTTClientSession, SessionRetry and MonitorNodeClash, which unit-arm64 runs on aarch64; the
# aarch64 MQTT path runs in monitor-mqtt, monitor-mqtt-tls, monitor-local-beacon and
# remote-changes. About 1 min of the aarch64 testbed saved.)
# Issue 30, MQTT liveness, against Debian's mosquitto:
# - two monitors with the same node name (two Pis left as "raspberrypi", told apart here by
#   ALTBEACOND_BOARD_SERIAL) get distinct client IDs: mosquitto takes no session over, and each
#   monitor says the node clash once;
# - the broker stopped (SIGSTOP) while a beacon is heard: keepalive_s 35 is longer than the 30 s
#   refresh, so the old rule (PINGREQ only after a keep-alive with nothing sent) never pinged.
#   The stall is logged within 1.5 x keepalive_s of the broker's last packet; after SIGCONT the
#   monitor is connected again (back-off) and its status is online;
# - meanwhile a fake broker (python3) answers CONNECT with PINGRESP: refused at once, said once,
#   tried again with growing waits;
# - issue 38: two monitors with one client ID (one machine, no board serial, the same adapter
#   name: as two cloned cards without a serial used to be) take the session from each other, but
#   a session the broker ends within 5 s grows the back-off instead of resetting it: far fewer
#   take-overs in 40 s than one a second (37 in 40 s before), the clash said once.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
ip link set lo up
KEEP=35
printf 'listener 1883 127.0.0.1\nallow_anonymous true\n' >/tmp/mosquitto.conf
mosquitto -c /tmp/mosquitto.conf >/tmp/mosquitto.log 2>&1 &
BROKER=$!
for ((i = 0; i < 50; i++)); do mosquitto_sub -t x -W 1 -C 1 >/dev/null 2>&1; [ $? != 27 ] || break; _tb_sleep 0.1; done
retained() { mosquitto_sub -t "$1" -C 1 -W 3 2>/dev/null; }

tbd_config
tbd_start
printf '10000000aaaa0001\n' >/tmp/serial1
printf '10000000aaaa0002\n' >/tmp/serial2
# monitor NAME ADAPTER PORT [SERIAL]: starts a monitor as node raspberrypi, its log /tmp/NAME.log
monitor() {
  cat >"/tmp/$1.toml" <<TOML
[monitor]
adapter = "$2"
silent_after_s = 10
rescan_s = 1
node = "raspberrypi"
[expect.rig]
type = "altbeacon"
uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
major = 1
minor = 2
[metrics]
textfile = "/tmp/$1.prom"
[mqtt]
host = "127.0.0.1"
port = $3
keepalive_s = $KEEP
TOML
  ALTBEACOND_BOARD_SERIAL=${4:-/nonexistent} "$ALTBEACOND_BIN" monitor --config "/tmp/$1.toml" >"/tmp/$1.log" 2>&1 </dev/null &
}
count() { grep -c "$2" "/tmp/$1.log"; }
wait_count() {  # LOG PATTERN N TIMEOUT_S: until more than N lines of /tmp/LOG.log match PATTERN
  local i
  for ((i = 0; i < $4 * 20; i++)); do [ "$(count "$1" "$2")" -gt "$3" ] && return 0; _tb_sleep 0.05; done
  return 1
}
dump() { for f in "$@"; do echo "--- $f:"; cat "$f"; done; }
client_id() { sed -n 's/.*MQTT: client ID \(altbeacond-[0-9a-f]*\) .*/\1/p' "/tmp/$1.log" | head -1; }

# Two monitors, one node name. The second has no adapter (hci7): it waits for one, and its MQTT
# output runs all the same.
monitor m1 hci1 1883 /tmp/serial1
M1=$!
wait_count m1 "beacon rig heard" 0 20 && wait_count m1 "MQTT: connected to 127.0.0.1:1883" 0 10 || { dump /tmp/m1.log /tmp/mosquitto.log; tb_fail "m1 did not hear the beacon and connect"; }
monitor m2 hci7 1883 /tmp/serial2
M2=$!
wait_count m2 "MQTT: connected to 127.0.0.1:1883" 0 10 || { dump /tmp/m2.log; tb_fail "m2 did not connect"; }
id1=$(client_id m1) id2=$(client_id m2)
[ -n "$id1" ] && [ -n "$id2" ] && [ "$id1" != "$id2" ] && [ ${#id1} -le 23 ] || { dump /tmp/m1.log /tmp/m2.log; tb_fail "client IDs '$id1' '$id2'"; }
wait_count m1 "another monitor (client ID $id2) publishes as node 'raspberrypi'" 0 5 \
  && wait_count m2 "another monitor (client ID $id1) publishes as node 'raspberrypi'" 0 5 || { dump /tmp/m1.log /tmp/m2.log; tb_fail "the node clash was not said on both sides"; }
_tb_sleep 3
grep -q "already connected, closing old connection" /tmp/mosquitto.log && { dump /tmp/mosquitto.log; tb_fail "mosquitto took a session over"; }
[ "$(count m1 "publishes as node")" = 1 ] && [ "$(count m2 "publishes as node")" = 1 ] || { dump /tmp/m1.log /tmp/m2.log; tb_fail "the clash said more than once"; }
[ "$(count m1 "MQTT: connected")" = 1 ] && [ "$(count m2 "MQTT: connected")" = 1 ] || { dump /tmp/m1.log /tmp/m2.log; tb_fail "a monitor lost its session"; }
kill -KILL "$M2"; wait "$M2" 2>/dev/null

# The fake broker: PINGRESP to whatever comes; one line per connection (monotonic seconds).
cat >/tmp/fake.py <<'PY'
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 1884))
s.listen(8)
open(sys.argv[2], "w").close()
log = open(sys.argv[1], "a")
while True:
    c, _ = s.accept()
    log.write("%.3f\n" % time.monotonic()); log.flush()
    c.settimeout(15)
    try:
        if c.recv(4096):
            c.sendall(b"\xd0\x00")
        while c.recv(4096):
            pass
    except OSError:
        pass
    c.close()
PY
python3 /tmp/fake.py /tmp/fake-conns.txt /tmp/fake-ready 2>/tmp/fake.log &
FAKE=$!
for ((i = 0; i < 200; i++)); do [ -e /tmp/fake-ready ] && break; _tb_sleep 0.05; done
[ -e /tmp/fake-ready ] || { cat /tmp/fake.log; tb_fail "the fake broker did not start"; }
monitor m0 hci7 1884
M0=$!

# The broker stalls while the beacon is heard and the monitor refreshes its topics.
t0=$(tb_now_ms)
kill -STOP "$BROKER"
wait_count m1 "the broker stalled" 0 $((KEEP * 3 / 2 + 10)) || { dump /tmp/m1.log; tb_fail "the stalled broker was not noticed"; }
stall_ms=$(( $(tb_now_ms) - t0 ))
# The broker's last packet came at most a keep-alive before t0 (a PINGREQ goes a keep-alive
# after it): the stall is noticed between 0.5 and 1.5 keep-alives after t0.
[ "$stall_ms" -le $((KEEP * 1500 + 1000)) ] && [ "$stall_ms" -ge $((KEEP * 500 - 1000)) ] || { dump /tmp/m1.log; tb_fail "stall noticed after $stall_ms ms"; }
grep -q "MQTT: 127.0.0.1:1883: the broker stalled: nothing from it for 52.5 s (1.5 × keepalive_s), not even a PINGRESP; trying again with back-off" /tmp/m1.log \
  || { dump /tmp/m1.log; tb_fail "the stall's log line"; }
_tb_sleep 5
kill -CONT "$BROKER"
wait_count m1 "MQTT: connected to 127.0.0.1:1883 again" 0 40 || { dump /tmp/m1.log /tmp/mosquitto.log; tb_fail "not connected again after SIGCONT"; }
back_ms=$(( $(tb_now_ms) - t0 - stall_ms ))
[ "$(count m1 "the broker stalled")" = 1 ] || { dump /tmp/m1.log; tb_fail "the stall said more than once"; }
# Whatever the broker had queued from before (our old connection's will) does not outlast us.
_tb_sleep 3
[ "$(retained altbeacond/raspberrypi/status)" = online ] || { dump /tmp/m1.log /tmp/mosquitto.log; tb_fail "status not online after the reconnection"; }
case "$(retained altbeacond/raspberrypi/beacons/rig)" in *'"heard":true'*) ;; *) tb_fail "the beacon's topic after the reconnection" ;; esac

# The fake broker, all this while.
kill -KILL "$M0"; wait "$M0" 2>/dev/null
kill "$FAKE"; wait "$FAKE" 2>/dev/null
tries=$(wc -l </tmp/fake-conns.txt)
[ "$(count m0 "the broker answered CONNECT with PINGRESP, not CONNACK; trying again with back-off")" = 1 ] || { dump /tmp/m0.log; tb_fail "the fake broker: not said once"; }
grep -q "no answer from the broker within" /tmp/m0.log && { dump /tmp/m0.log; tb_fail "the fake broker: waited for the CONNACK deadline"; }
gaps=$(awk 'NR > 1 { printf "%.1f ", $1 - p } { p = $1 }' /tmp/fake-conns.txt)
# back-off: 1, 2, 4, 8 ... s (the session refused at once, no 10 s CONNACK deadline between)
awk 'NR > 2 && $1 - p < 1.5 * g { bad = 1 } NR > 1 { g = $1 - p } { p = $1 } END { exit !(NR >= 5 && !bad) }' /tmp/fake-conns.txt \
  || { cat /tmp/fake-conns.txt; dump /tmp/m0.log /tmp/fake.log; tb_fail "the fake broker: $tries attempts (gaps $gaps)"; }

# The metrics file (rewritten at least every minute since the clash).
grep -q '^altbeacond_mqtt_node_clash 1$' /tmp/m1.prom && grep -q '^altbeacond_mqtt_dropped_messages_total 0$' /tmp/m1.prom \
  || { cat /tmp/m1.prom; tb_fail "the MQTT figures in m1's metrics"; }
# Two clones: one client ID (no serial: /etc/machine-id and this guest's network hardware).
clone() {
  cat >"/tmp/$1.toml" <<TOML
[monitor]
adapter = "hci7"
node = "clone"
[mqtt]
host = "127.0.0.1"
port = 1883
keepalive_s = 30
TOML
  ALTBEACOND_BOARD_SERIAL=/nonexistent "$ALTBEACOND_BIN" monitor --config "/tmp/$1.toml" >"/tmp/$1.log" 2>&1 </dev/null &
}
clone c1
C1=$!
wait_count c1 "MQTT: connected to 127.0.0.1:1883" 0 10 || { dump /tmp/c1.log; tb_fail "c1 did not connect"; }
clone c2
C2=$!
cid=$(client_id c1)
[ -n "$cid" ] && [ "$cid" = "$(client_id c2)" ] || { dump /tmp/c1.log /tmp/c2.log; tb_fail "the clones' client IDs differ ('$cid'): nothing to test"; }
before=$(grep -c "Client $cid already connected, closing old connection" /tmp/mosquitto.log)
_tb_sleep 40
takeovers=$(( $(grep -c "Client $cid already connected, closing old connection" /tmp/mosquitto.log) - before ))
kill -KILL "$C1" "$C2"; wait "$C1" "$C2" 2>/dev/null
[ "$takeovers" -ge 2 ] && [ "$takeovers" -le 16 ] || { dump /tmp/c1.log /tmp/c2.log; tb_fail "clones: $takeovers take-overs in 40 s (the back-off did not grow?)"; }
[ "$(( $(count c1 "times in a row") + $(count c2 "times in a row") ))" -ge 1 ] && [ "$(count c1 "times in a row")" -le 1 ] && [ "$(count c2 "times in a row")" -le 1 ] \
  || { dump /tmp/c1.log /tmp/c2.log; tb_fail "clones: the clash not said, or said more than once"; }

kill "$M1"; wait "$M1"; rc=$?
[ "$rc" = 0 ] || { dump /tmp/m1.log; tb_fail "m1 exited $rc after SIGTERM"; }
kill "$BROKER"; wait "$BROKER" 2>/dev/null
tbd_finish
tb_pass "one node name, two monitors: client IDs $id1 and $id2, no session takeover, the clash said once on each side and in the metrics; broker stopped for $(( (stall_ms + 5000) / 1000 )) s (keepalive_s $KEEP, refresh 30 s): stall logged after $stall_ms ms, connected again $back_ms ms after it, status online; fake broker answering CONNECT with PINGRESP: said once, $tries attempts with gaps $gaps s; two clones with client ID $cid: $takeovers take-overs in 40 s"

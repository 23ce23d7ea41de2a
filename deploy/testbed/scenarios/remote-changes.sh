# timeout: 300
# Issue 32, Deliver 2: changes from afar. The monitor ([mqtt] control = "fleet", a broker that
# wants a password) carries each change to the beacon daemon; each setting is heard on air (the
# figures are printed, SPEC §7: no timed assertion), written into the config file, and a refused
# one leaves the beacon and the file as they were, reported with check's FILE:LINE:COL message.
# The fleet topic cannot set the identity. Advertising off is silence and a slow pulse on the
# status LED, kept across a restart; identify strobes both LEDs. A kill -9 right after a change
# leaves a whole config (the old one or the new one).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/frames-lib.sh"
S=17 F=27
tbd_broker
local_is() { tbd_local_is pi1 "$@"; }
hexfor() { printf '0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa6%04x%04x%s00' "$1" "$2" "$3"; }
times=""
# change NAME TOPIC PAYLOAD HEX: publishes, waits to hear HEX, notes the time it took
change() {
  local t ms
  t=$(tb_now_ms)
  pub "$2" "$3"
  ms=$(tb_wait_heard "$4" 5000 "$t") || { cat /tmp/monitor.log; tbd_dump; tb_fail "$1 ($2 = $3) not heard within 5 s"; }
  times="$times $1=${ms}ms"
}
checks_ok() { "$ALTBEACOND_BIN" check --config "$TBD_CONFIG" >/tmp/check.txt 2>&1 || { cat /tmp/check.txt "$TBD_CONFIG"; tb_fail "$1: the config file does not pass check"; }; }

tbd_config "$(tbd_leds)"
tbd_start
printf '[monitor]\nnode = "pi1"\n[mqtt]\nhost = "127.0.0.1"\nkeepalive_s = 10\nusername = "mon"\npassword_file = "/tmp/mqtt-password"\ncontrol = "fleet"\n' >/tmp/monitor.toml
"$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml >/tmp/monitor.log 2>&1 </dev/null &
MON=$!
local_is 'd["on_air"] is True and d["power"] == -59' 15 || tb_fail "the local beacon not published"
d=$(retained homeassistant/number/altbeacond_beacon__pi1/power/config)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["command_topic"]=="altbeacond/pi1/beacon/set/power", d' "$d" \
  || tb_fail "no Home Assistant number entity for the power: $d"

# Each setting, from this beacon's own topics and from the fleet's.
change power altbeacond/pi1/beacon/set/power -40 "$(hexfor 1 2 d8)"
change major altbeacond/pi1/beacon/set/major 9 "$(hexfor 9 2 d8)"
change minor altbeacond/pi1/beacon/set/minor 11 "$(hexfor 9 11 d8)"
change fleet-power altbeacond/all/beacon/set/power -45.0 "$(hexfor 9 11 d3)"
change uuid altbeacond/pi1/beacon/set/uuid 2F234454CF6D4A0FADF2F4911BA9FFA7 \
  0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa70009000bd300
grep -q '^power = -45$' "$TBD_CONFIG" && grep -q '^major = 9$' "$TBD_CONFIG" || { cat "$TBD_CONFIG"; tb_fail "the changes are not in the config file"; }
checks_ok "after the changes"
pub altbeacond/all/beacon/set/interval_ms 250
local_is 'd["interval_ms"] == 250 and d["configured_interval_ms"] == 250' 10 || tb_fail "interval_ms from the fleet topic not applied"
grep -q '^interval_ms = 250$' "$TBD_CONFIG" || { cat "$TBD_CONFIG"; tb_fail "interval_ms not in the config file"; }
NOW=0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa70009000bd300

# The fleet topic never sets the identity: ignored by the monitor, said in its log.
pub altbeacond/all/beacon/set/major 5
for ((i = 0; i < 20; i++)); do grep -q 'major.*fleet\|fleet.*major' /tmp/monitor.log && break; _tb_sleep 0.25; done
grep -q 'major.*fleet\|fleet.*major' /tmp/monitor.log || { cat /tmp/monitor.log; tb_fail "the fleet's major not refused in the monitor's log"; }
grep -q '^major = 9$' "$TBD_CONFIG" || { cat "$TBD_CONFIG"; tb_fail "the fleet topic changed the identity"; }

# A refused change: the file untouched, the beacon as it was, the reason published with check's message.
cp "$TBD_CONFIG" /tmp/before.toml
pub altbeacond/pi1/beacon/set/power 5
local_is 'd["change"].startswith("refused: set power 5: /tmp/c.toml:") and "beacon.power must be" in d["change"]' 10 \
  || tb_fail "the refused change not published"
cmp -s "$TBD_CONFIG" /tmp/before.toml || { diff /tmp/before.toml "$TBD_CONFIG"; tb_fail "a refused change altered the config file"; }
tb_wait_heard "$NOW" 3000 >/dev/null || { tbd_dump; tb_fail "the beacon changed after a refused change"; }
pub altbeacond/pi1/beacon/set/power loud
local_is 'd["change"].startswith("refused: set power loud:")' 10 || tb_fail "a payload that is no number not refused"
tbd_alive

# Frames on and off: the iBeacon frame (the [ibeacon] table is added), then off again.
IB=0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa70009000bd3
change ibeacon-on altbeacond/pi1/beacon/set/ibeacon ON "$IB"
pub altbeacond/pi1/beacon/set/ibeacon OFF
tb_wait_silent 2000 5000 "$IB" >/dev/null || { tbd_dump; tb_fail "the iBeacon frame still on air after OFF"; }
tb_wait_heard "$NOW" 3000 >/dev/null || { tbd_dump; tb_fail "AltBeacon lost with the iBeacon frame"; }
checks_ok "after the frame switches"

# Advertising off: silence, the status LED pulses slowly; kept across a restart; on again.
t=$(tb_now_ms)
pub altbeacond/all/beacon/set/advertising OFF
tb_wait_silent 1500 5000 >/dev/null || { tbd_dump; tb_fail "still on air after advertising OFF"; }
local_is 'd["advertising"] is False and d["on_air"] is False' 10 || tb_fail "advertising off not published"
r=$(tb_gpio_sample $S 4500)
echo "$r" | awk '$1 == "blink" && $2 >= 0.15 && $2 <= 0.4 {ok = 1} END {exit !ok}' || { tbd_dump; tb_fail "status LED with advertising off: '$r'"; }
tb_log "advertising off: status LED $r"
tbd_finish
: >/tmp/altbeacond.log
tb_daemon_start run --config "$TBD_CONFIG"
tbd_wait_log "advertising off" 10 || { tbd_dump; tb_fail "advertising off not kept across a restart"; }
tb_assert_silent 2000
change advertising-on altbeacond/pi1/beacon/set/advertising ON "$NOW"

# Identify: both LEDs strobe for 10 s, then back to steady.
pub altbeacond/pi1/beacon/set/identify PRESS
_tb_sleep 1
r=$(tb_gpio_sample $S 2000)
echo "$r" | awk '$1 == "blink" && $2 >= 2.5 && $2 <= 4.5 {ok = 1} END {exit !ok}' || { tbd_dump; tb_fail "identify: status LED '$r'"; }
tb_log "identify: status LED $r, fault LED $(tb_gpio_sample $F 1000)"
_tb_sleep 8
[ "$(tb_gpio_sample $S 1000)" = on ] || { tbd_dump; tb_fail "identify did not end after 10 s"; }
# A retained identify is not a press: given to the monitor as it subscribes (retain flag set), it
# is ignored (it would fire at every reconnection).
kill "$MON"; wait "$MON" 2>/dev/null
mosquitto_pub -u mon -P s3cret -r -t altbeacond/pi1/beacon/set/identify -m PRESS
"$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml >/tmp/monitor.log 2>&1 </dev/null &
MON=$!
for ((i = 0; i < 40; i++)); do grep -q 'ignored: altbeacond/pi1/beacon/set/identify: a retained' /tmp/monitor.log && break; _tb_sleep 0.25; done
grep -q 'ignored: altbeacond/pi1/beacon/set/identify: a retained' /tmp/monitor.log || { cat /tmp/monitor.log; tb_fail "the retained identify not said ignored"; }
[ "$(tb_gpio_sample $S 1000)" = on ] || { tbd_dump; tb_fail "a retained identify was taken"; }
mosquitto_pub -u mon -P s3cret -r -t altbeacond/pi1/beacon/set/identify -n

# A kill -9 right after each change: the config file is always whole, old or new.
for p in -50 -51 -52 -53 -54 -55; do
  pub altbeacond/pi1/beacon/set/power "$p"
  _tb_sleep 0.0$((RANDOM % 10))
  kill -9 "$TB_DAEMON_PID"; wait "$TB_DAEMON_PID" 2>/dev/null
  checks_ok "after kill -9 during set power $p"
  ls -a "$(dirname "$TBD_CONFIG")" | grep -q '^\.c\.toml\.tmp$' && tb_log "a temporary file left by the kill (ignored by the daemon)"
  : >/tmp/altbeacond.log
  tb_daemon_start run --config "$TBD_CONFIG"
  tbd_wait_log "on air" 10 || { tbd_dump; tb_fail "no restart after kill -9"; }
done
tbd_finish
kill "$MON"; wait "$MON" 2>/dev/null
tb_pass "changes from afar heard on air:$times; refused ones reported, the file untouched; the fleet never sets the identity; advertising off kept across a restart; identify; the config whole after kill -9"

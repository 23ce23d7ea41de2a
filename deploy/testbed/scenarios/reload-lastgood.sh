# SPEC §6 across a restart: every applied config is stored in the state directory; a config
# file refused at start (a bad edit made while the daemon was down) puts the last good beacon on
# air with the "edit refused" LED state (fault LED ~1 Hz) and the FILE:LINE:COL refusal logged;
# fixing the file applies it (and stores it); with no stored config a bad file still exits 78.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
S=17 F=27
export STATE_DIRECTORY=/tmp/state
rm -rf "$STATE_DIRECTORY" && mkdir -p "$STATE_DIRECTORY"
stored=$STATE_DIRECTORY/last-good.toml
hex5=0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600050002c500

tbd_config "$(tbd_leds)"
tbd_start
tbd_wait_log "stored the applied config" 5 || { tbd_dump; tb_fail "the applied config was not stored"; }
cmp -s "$stored" "$TBD_CONFIG" || { tbd_dump; tb_fail "$stored is not the applied file"; }

# a bad edit while running: refused, and the stored copy stays the good one
sed -i 's/^major = .*/major = /' "$TBD_CONFIG"
tbd_wait_log "c.toml:3:9" 5 || { tbd_dump; tb_fail "refused edit not logged as FILE:LINE:COL"; }
grep -q '^major = 1$' "$stored" || { tbd_dump; tb_fail "a refused edit changed the stored config"; }

# the daemon dies hard, and the controller forgets the beacon (as across a power cut)
kill -KILL "$TB_DAEMON_PID"; wait "$TB_DAEMON_PID" 2>/dev/null; TB_DAEMON_PID=""
tb_fault_reset hci0
tb_wait_silent 1000 5000 "$TB_RIG_HEX" >/dev/null || tb_fail "the beacon stayed on air after the kill and reset"

# start again on the bad file: the last good beacon goes on air
: >/tmp/altbeacond.log
t0=$(tb_now_ms)
tb_daemon_start run --config "$TBD_CONFIG"
ms=$(tb_wait_heard "$TB_RIG_HEX" 5000 "$t0") || { tbd_dump; tb_fail "last good beacon not heard within 5 s of a start on a bad file"; }
tb_log "last good beacon heard ${ms} ms after the start on a refused file"
tbd_wait_log "config file refused at start: .*c.toml:3:9" 3 || { tbd_dump; tb_fail "the refusal at start was not logged as FILE:LINE:COL"; }
tbd_alive
r=$(tb_gpio_sample $F 3500)
echo "$r" | awk '$1 == "blink" && $2 >= 0.7 && $2 <= 1.4 {ok = 1} END {exit !ok}' \
  || { tbd_dump; tb_fail "fault LED is '$r' running the last good config, expected a ~1 Hz blink"; }
tb_log "fault LED: $r"
st=$(tb_gpio_sample $S 1000); [ "$st" = on ] || { tbd_dump; tb_fail "status LED is '$st', expected on"; }

# fixing the file applies it as any edit, and stores it
sed -i 's/^major = .*/major = 5/' "$TBD_CONFIG"
tb_wait_heard "$hex5" 5000 >/dev/null || { tbd_dump; tb_fail "fixed file not heard"; }
tbd_wait_log "config accepted again" 3 || { tbd_dump; tb_fail "fix not logged as accepted"; }
tbd_wait_log "stored the applied config" 3 || { tbd_dump; tb_fail "the fixed config was not stored"; }
cmp -s "$stored" "$TBD_CONFIG" || { tbd_dump; tb_fail "$stored is not the fixed file"; }
sleep 0.3
led=$(tb_gpio_sample $F 1200); [ "$led" = off ] || { tbd_dump; tb_fail "fault LED is '$led' after the fix, expected off"; }
tbd_finish

# no stored config and a bad file: exit 78, as before
rm -rf /tmp/state-empty && mkdir -p /tmp/state-empty
printf '[beacon]\nmajor = \n' >/tmp/bad.toml
rc=0; STATE_DIRECTORY=/tmp/state-empty "$ALTBEACOND_BIN" run --config /tmp/bad.toml >/tmp/bad.log 2>&1 </dev/null || rc=$?
[ "$rc" = 78 ] || { cat /tmp/bad.log; tb_fail "bad file with nothing stored exited $rc, expected 78"; }
grep -q "bad.toml:2:9" /tmp/bad.log || { cat /tmp/bad.log; tb_fail "no FILE:LINE:COL for the bad file"; }
tb_pass "last good beacon on air ${ms} ms after a start on a refused file, fault LED $r; fix applied and stored; nothing stored: exit 78"

# init: systemd
# timeout: 240
# The shipped unit under a real systemd (PID 1 in the guest; deploy/altbeacond.service installed
# with deploy/install --root, the user as the .deb makes it): active with READY=1 (Type=notify),
# on air, status LED on, STATUS= text; kill -STOP of the daemon -> systemd's watchdog restarts it
# -> on air again; `systemctl reload` applies an edit; `systemctl stop` takes the beacon off air
# and releases the LEDs; the state directory (StateDirectory=) keeps the last good config under
# the sandbox; a refused edit, then a real reboot of the guest: the last good beacon is on air at
# boot with the "edit refused" LED state and STATUS=, and fixing the file is applied as any edit.
# Boot-to-air is the guest's CLOCK_MONOTONIC (time since the kernel started) when hci1 hears it.
. "$TB_REPO/deploy/testbed/lib.sh"
S=17
CONF=/etc/altbeacond/config.toml
HEX7=${TB_RIG_HEX/a600010002c500/a600070002c500}   # the rig beacon with major 7

prop() { systemctl show -P "$1" altbeacond.service; }
journal() { journalctl -b -u altbeacond.service --no-pager -o cat | tail -n "${1:-30}"; }
fail() { echo "--- journal:"; journal 40; tb_fail "$*"; }
wait_prop() {  # NAME VALUE SECONDS
  local i
  for ((i = 0; i < $3 * 10; i++)); do [ "$(prop "$1")" = "$2" ] && return 0; _tb_sleep 0.1; done
  return 1
}

if [ "${TB_BOOT:-1}" = 1 ]; then
  wait_prop ActiveState active 30 || fail "altbeacond.service is $(prop ActiveState)/$(prop SubState), not active"
  air=$(tb_wait_heard "$TB_RIG_HEX" 15000) || fail "beacon not heard"
  tb_log "boot-to-air: ${air} ms after the kernel started (unit active, Type=notify: READY=1 received)"
  st=$(prop StatusText)
  case "$st" in *advertising*2f234454-cf6d-4a0f-adf2-f4911ba9ffa6*) ;; *) fail "STATUS= is '$st'" ;; esac
  tb_log "STATUS=$st"
  [ "$(tb_gpio_sample $S 1000)" = on ] || fail "status LED not steady on"
  [ "$(tb_gpio_consumer $S)" = altbeacond ] || fail "status line held by '$(tb_gpio_consumer $S)'"
  tb_log "status LED on, line held by altbeacond; user $(ps -o user= -p "$(prop MainPID)")"

  # a stalled daemon: systemd's watchdog (WatchdogSec=) kills it, Restart= brings it back
  pid=$(prop MainPID)
  t0=$(tb_now_ms)
  kill -STOP "$pid"
  for ((i = 0; i < 900; i++)); do
    p=$(prop MainPID)
    [ "$p" != "$pid" ] && [ "$p" != 0 ] && [ "$(prop ActiveState)" = active ] && break
    _tb_sleep 0.1
  done
  [ "$p" != "$pid" ] || fail "no restart within 90 s of SIGSTOP"
  back=$(tb_wait_heard "$TB_RIG_HEX" 15000 "$t0") || fail "beacon not back after the watchdog restart"
  tb_log "kill -STOP: watchdog restart (pid $pid -> $p, NRestarts=$(prop NRestarts), result of the old one: $(journalctl -b -u altbeacond.service --no-pager -o cat | grep -m1 -o 'Watchdog timeout[^.]*' || echo '?')); on air again $back ms after SIGSTOP"
  journalctl -b -u altbeacond.service --no-pager -o cat | grep -q -i 'watchdog' || fail "no watchdog timeout in the journal"

  # systemctl reload: SIGHUP, the edit applies
  sed -i 's/^major = 1$/major = 7/' "$CONF"
  t0=$(tb_now_ms)
  systemctl reload altbeacond.service || fail "systemctl reload failed"
  ms=$(tb_wait_heard "$HEX7" 5000 "$t0") || fail "the edit did not reach the air after systemctl reload"
  journal 10 | grep -q 'SIGHUP' || fail "no SIGHUP in the journal after systemctl reload"
  tb_log "systemctl reload: major 7 on air in $ms ms"

  # the status file under the sandbox (RuntimeDirectory=): health reads it, as any user
  h=$(runuser -u nobody -- "$ALTBEACOND_BIN" health); rc=$?
  [ "$rc" = 0 ] || fail "altbeacond health (as nobody) exited $rc: $h"
  case "$h" in "on-air: advertising 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major 7 "*) ;; *) fail "health says '$h'" ;; esac
  tb_log "health (as nobody): exit 0, '$h'; $(stat -c '%n %U %a' /run/altbeacond/status.json)"

  # systemctl stop: off air, LEDs released
  systemctl stop altbeacond.service
  [ "$(prop ActiveState)" = inactive ] || fail "not inactive after stop: $(prop ActiveState)/$(prop Result)"
  tb_assert_silent 1500 "$HEX7"
  [ -z "$(tb_gpio_consumer $S)" ] || fail "status line still held after stop"
  tb_log "systemctl stop: inactive ($(prop Result)), off air, LED line released"
  h=$("$ALTBEACOND_BIN" health); rc=$?
  [ "$rc" = 3 ] || fail "altbeacond health exited $rc after stop: $h"
  systemctl start altbeacond.service || fail "start after stop failed"
  tb_wait_heard "$HEX7" 10000 >/dev/null || fail "not on air after start"
  # the state directory, written by the daemon under the sandbox (StateDirectory=altbeacond)
  lg=/var/lib/altbeacond/last-good.toml
  grep -q '^major = 7$' "$lg" 2>/dev/null || fail "the state directory has no last good config with major 7: $(ls -l /var/lib/altbeacond)"
  tb_log "state directory: $(stat -c '%U %a' /var/lib/altbeacond) $(stat -c '%n %U %a %s bytes' "$lg")"

  # a refused edit (then the power goes): the running daemon keeps major 7 on air
  sed -i 's/^major = 7$/major = 70000/' "$CONF"
  for ((i = 0; i < 50; i++)); do journal 5 | grep -q 'refused' && break; _tb_sleep 0.1; done
  journal 5 | grep -q 'refused' || fail "the bad edit was not refused"
  tb_wait_heard "$HEX7" 3000 >/dev/null || fail "beacon off air after a refused edit"
  tb_log "refused edit (major = 70000) with the last good beacon on air; rebooting the guest"
  exit 99
fi

# boot 2, after a real reboot, with the refused file still in place
wait_prop ActiveState active 30 || fail "after reboot: altbeacond.service is $(prop ActiveState)/$(prop SubState) (exit $(prop ExecMainStatus))"
air=$(tb_wait_heard "$HEX7" 15000) || fail "after reboot: the last good beacon (major 7) not heard"
tb_log "after reboot with a refused config: the last good beacon on air ${air} ms after the kernel started"
journal 40 | grep -q "$CONF:[0-9]*:[0-9]*:" || fail "the refusal is not logged with FILE:LINE:COL"
tb_log "journal: $(journal 40 | grep -m1 "$CONF:[0-9]*:[0-9]*:")"
st=$(prop StatusText)
case "$st" in *refused*) ;; *) fail "STATUS= does not say the config was refused: '$st'" ;; esac
tb_log "STATUS=$st"
r=$(tb_gpio_sample 27 3500)
echo "$r" | awk '$1 == "blink" && $2 >= 0.7 && $2 <= 1.4 {ok = 1} END {exit !ok}' || fail "fault LED is '$r', expected a 1 Hz blink"
[ "$(tb_gpio_sample $S 1000)" = on ] || fail "status LED not on"
tb_log "LEDs: status on, fault $r"
# the fixed file is applied as any edit
sed -i 's/^major = 70000$/major = 8/' "$CONF"
t0=$(tb_now_ms)
ms=$(tb_wait_heard "${TB_RIG_HEX/a600010002c500/a600080002c500}" 5000 "$t0") || fail "the fixed file did not reach the air"
tb_log "fixed file (major 8) on air in $ms ms"
journal 80 | grep -E -i 'SIGSYS|EPERM|Operation not permitted' && fail "sandbox refusals in the journal"
tb_pass "systemd: READY=1, on air, LED, STATUS=, watchdog restart, reload, stop, state directory, refused config + reboot -> last good on air"

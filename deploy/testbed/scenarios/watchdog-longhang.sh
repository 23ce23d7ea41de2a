# timeout: 240
# SPEC §5, responsiveness: the controller hangs for 15 s (btvirt stopped). Meanwhile the loop
# keeps answering: an edit is read and SIGHUP handled (≤ 1 s each), the status LED keeps its
# fault pattern's timing (a short flash every 2 s), and SIGTERM ends the daemon (≤ 0.5 s) while
# the controller still does not answer. The figures are printed; the checks only fail when the
# loop was clearly blocked (a controller command's timeout, 2.5 s). Then it answers again and a
# new daemon puts the edited beacon on air.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
S=17
HEX9=${TB_RIG_HEX/a600010002c500/a600090002c500}   # the rig beacon with major 9
leds() { printf '%s\n' "[leds]" "chip = \"$TB_GPIOCHIP\"" "status = $S"; }
tbd_config "$(leds)" "[watchdog]" "check_interval_s = 1"
tbd_start
t0=$(tb_now_ms)
tb_fault_hang
# within 1 s: an edit is read and applied to the config (the controller gets it when it answers)
_tb_sleep 1
sed -i 's/^major = 1$/major = 9/' "$TBD_CONFIG"
te=$(tb_now_ms)
tbd_wait_log "config changed: .* major 9" 5 || { tbd_dump; tb_fail "edit not read while the controller hangs"; }
edit=$(($(tb_now_ms) - te))
_tb_sleep 0.5
th=$(tb_now_ms)
kill -HUP "$TB_DAEMON_PID"
tbd_wait_log "SIGHUP: reloading" 5 || { tbd_dump; tb_fail "SIGHUP not handled while the controller hangs"; }
hup=$(($(tb_now_ms) - th))
# the hang is noticed (two probes without an answer), then the fault pattern keeps its timing
tbd_wait_log "controller not answering" 12 || { tbd_dump; tb_fail "the hang was not noticed"; }
led=$(tb_gpio_sample $S 6000)
echo "$led" | awk '$1 == "blink" && $2 >= 0.3 && $2 <= 0.7 && $3 >= 1 && $3 <= 30 {ok = 1} END {exit !ok}' \
  || { tbd_dump; tb_fail "status LED during the hang is '$led', expected a short flash every 2 s"; }
# SIGTERM while the controller still hangs
tbd_alive
ts=$(tb_now_ms)
kill -TERM "$TB_DAEMON_PID"
for ((i = 0; i < 500; i++)); do _tb_alive "$TB_DAEMON_PID" || break; _tb_sleep 0.01; done
term=$(($(tb_now_ms) - ts))
_tb_alive "$TB_DAEMON_PID" && { tbd_dump; tb_fail "daemon still running 5 s after SIGTERM during a hang"; }
wait "$TB_DAEMON_PID"; rc=$?
TB_DAEMON_PID=""
[ "$rc" = 0 ] || { tbd_dump; tb_fail "exit status $rc after SIGTERM"; }
[ "$(tb_gpio_consumer $S)" = "" ] || tb_fail "status line still held after exit"
hung_for=$(($(tb_now_ms) - t0))
for ((; hung_for < 15000; hung_for = $(tb_now_ms) - t0)); do _tb_sleep 0.2; done
tb_fault_unhang
for v in "$edit" "$hup" "$term"; do
  [ "$v" -lt 2500 ] || { tbd_dump; tb_fail "the loop was blocked: edit $edit ms, SIGHUP $hup ms, SIGTERM $term ms"; }
done
: >/tmp/altbeacond.log
tbd_start "$HEX9"
tbd_finish
tb_pass "15 s hang: edit read in ${edit} ms, SIGHUP in ${hup} ms (≤ 1000), LED '$led' (a flash every 2 s), SIGTERM exit in ${term} ms (≤ 500); edited beacon on air ${TBD_START_MS} ms after a restart"

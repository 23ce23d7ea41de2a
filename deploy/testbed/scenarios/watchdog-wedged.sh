# timeout: 240
# SPEC §5, escalation: a controller that stops answering for good ("command 0x.... tx timeout" on
# a Pi's UART controller) until the adapter is taken down and up (the kernel's Reset at open
# cures it): the daemon re-arms with back-off, then takes the adapter down and up (logged once)
# and is back on air. Then a controller that not even down and up cures: the ladder's last step
# (run by hand, not under systemd: nobody can restart it, so it keeps retrying and says so); when
# it is cured, the beacon comes back. The fault LED is on while it fails.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)" "[watchdog]" "check_interval_s = 1"
tbd_start
t0=$(tb_now_ms)
tb_fault_wedge || tb_fail "cannot wedge hci0"
tbd_wait_log "controller not answering" 15 || { tbd_dump; tb_fail "the wedge was not noticed"; }
[ "$(tb_gpio_sample 27 1000)" = on ] || { tbd_dump; tb_fail "fault LED not on while the controller fails"; }
tbd_wait_log "taking the adapter down and up" 60 || { tbd_dump; tb_fail "no escalation to down and up"; }
cycle=$(($(tb_now_ms) - t0))
back=$(tb_wait_heard "$TB_RIG_HEX" 30000 "$t0") || { tbd_dump; tb_fail "not back on air after down and up"; }
tbd_wait_log "back on air after hung" 10 || { tbd_dump; tb_fail "no 'back on air' after down and up"; }
n=$(grep -c "re-arms; taking the adapter down and up" /tmp/altbeacond.log)
[ "$n" = 1 ] || { tbd_dump; tb_fail "the escalation was logged $n times"; }
tb_log "soft wedge: down and up after ${cycle} ms, on air again ${back} ms after the wedge"
# a hard wedge: down and up does not cure it either
t1=$(tb_now_ms)
tb_fault_wedge_hard || tb_fail "cannot wedge hci0 hard"
tbd_wait_log "also after taking the adapter down and up; restarting the service" 90 || { tbd_dump; tb_fail "the ladder did not reach its last step"; }
last=$(($(tb_now_ms) - t1))
tbd_wait_log "not under systemd: nobody to restart the service; retrying" 5 || { tbd_dump; tb_fail "no word about the missing systemd"; }
tbd_alive
t2=$(tb_now_ms)
tb_fault_unwedge
# (btvirt keeps a wedged controller's old advertising on air: wait for the daemon's word first)
for ((i = 0; i < 600; i++)); do
  [ "$(grep -c "back on air after hung" /tmp/altbeacond.log)" -ge 2 ] && break
  _tb_sleep 0.05
done
[ "$i" -lt 600 ] || { tbd_dump; tb_fail "no recovery within 30 s of the cure"; }
back2=$(tb_wait_heard "$TB_RIG_HEX" 5000 "$t2") || { tbd_dump; tb_fail "not back on air once the controller was cured"; }
tbd_finish
tbd_assert_off_air
tb_pass "wedged: down and up after ${cycle} ms, on air ${back} ms after the wedge; hard wedge: last step after ${last} ms, back on air ${back2} ms after the cure"

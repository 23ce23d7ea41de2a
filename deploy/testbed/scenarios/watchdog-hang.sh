# SPEC §5: the controller hangs (commands time out): fault LED while hung, beacon back after it
# answers again (target ≤ 2 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)" "[watchdog]" "check_interval_s = 1"
tbd_start
tb_fault_hang
tbd_wait_log "controller not answering" 15 || { tb_fault_unhang; tbd_dump; tb_fail "the hang was not noticed"; }
led=$(tb_gpio_sample 27 600)
tb_fault_unhang
t=$(tb_now_ms)
[ "$led" = on ] || { tbd_dump; tb_fail "fault LED is '$led' while hung, expected on"; }
tbd_recovered "$t" "back on air after hung"
tbd_alive
tbd_finish
tb_pass "hung: fault LED on while hung; heard again ${TBD_BACK} ms after SIGCONT (target ≤ 2000 ms)"

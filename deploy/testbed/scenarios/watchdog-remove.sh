# SPEC §5: the controller vanishes (btvirt killed, like hciuart dying) and comes back: fault LED
# while gone, beacon back after it returns (target ≤ 1 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)"
tbd_start
tb_fault_remove
tbd_wait_log "adapter missing" 10 || { tbd_dump; tb_fail "the removal was not noticed"; }
led=$(tb_gpio_sample 27 600); [ "$led" = on ] || { tbd_dump; tb_fail "fault LED is '$led' while gone, expected on"; }
sleep 2
tbd_alive
tb_fault_return
t=$(tb_now_ms)
tbd_recovered "$t" "back on air after removed"
led=$(tb_gpio_sample 27 400); [ "$led" = off ] || tb_fail "fault LED is '$led' after return, expected off"
tbd_finish
tb_pass "removed: fault LED on while gone; heard again ${TBD_BACK} ms after hci0 returned (target ≤ 1000 ms)"

# SPEC §5: rfkill block shows the fault LED; after unblock the beacon is back (target ≤ 1 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)"
tbd_start >/dev/null
tb_fault_rfkill_block
tbd_wait_log "blocked by rfkill" 10 || { tbd_dump; tb_fail "the block was not noticed"; }
tb_assert_silent 1000 "$TB_RIG_HEX"
led=$(tb_gpio_sample 27 600); [ "$led" = on ] || { tbd_dump; tb_fail "fault LED is '$led' while blocked, expected on"; }
st=$(tb_gpio_sample 17 600); [ "$st" = off ] || tb_fail "status LED is '$st' while blocked, expected off"
t=$(tb_now_ms)
tb_fault_rfkill_unblock
ms=$(tb_wait_heard "$TB_RIG_HEX" 10000 "$t") || { tbd_dump; tb_fail "beacon not heard after unblock"; }
tbd_wait_log "back on air after rfkill" 5 || { tbd_dump; tb_fail "no rfkill re-arm logged"; }
led=$(tb_gpio_sample 27 600); [ "$led" = off ] || tb_fail "fault LED is '$led' after unblock, expected off"
tbd_alive
tbd_finish
tb_pass "rfkill: fault LED on while blocked; heard again ${ms} ms after unblock (target ≤ 1000 ms)"

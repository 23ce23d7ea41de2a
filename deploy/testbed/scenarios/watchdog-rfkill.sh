# SPEC §5: rfkill block shows the fault LED; after unblock the beacon is back (target ≤ 1 s).
# (btvirt keeps advertising while the host side is blocked, so silence is not checked here.)
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)"
tbd_start
tb_fault_rfkill_block
tbd_wait_log "blocked by rfkill" 10 || { tbd_dump; tb_fail "the block was not noticed"; }
led=$(tb_gpio_sample 27 600); [ "$led" = on ] || { tbd_dump; tb_fail "fault LED is '$led' while blocked, expected on"; }
st=$(tb_gpio_sample 17 600); [ "$st" = off ] || { tbd_dump; tb_fail "status LED is '$st' while blocked, expected off"; }
t=$(tb_now_ms)
tb_fault_rfkill_unblock
tbd_recovered "$t" "back on air after rfkill"
led=$(tb_gpio_sample 27 600); [ "$led" = off ] || tb_fail "fault LED is '$led' after unblock, expected off"
tbd_alive
tbd_finish
tb_pass "rfkill: fault LED on while blocked; heard again ${TBD_BACK} ms after unblock (target ≤ 1000 ms)"

# SPEC §5: a controller reset by someone else (hciconfig hci0 reset) is re-armed (target ≤ 1 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start >/dev/null
tbd_observe_bg "$TB_RIG_HEX"
t=$(tb_now_ms)
tb_fault_reset
tbd_wait_log "back on air after reset" 10 || { tbd_dump; tb_fail "no re-arm after reset"; }
sleep 1
tbd_observe_stop
tbd_recovery "$t" || { tbd_dump; tb_fail "beacon not heard after the reset"; }
tbd_alive
tbd_finish
tb_pass "reset: heard again ${TBD_BACK} ms after the reset (off air ${TBD_GAP} ms; target ≤ 1000 ms)"

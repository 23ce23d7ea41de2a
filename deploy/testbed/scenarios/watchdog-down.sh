# SPEC §5: the adapter brought down (hciconfig hci0 down) is brought up and re-armed (target ≤ 1 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start >/dev/null
tbd_observe_bg "$TB_RIG_HEX"
t=$(tb_now_ms)
tb_fault_down
tbd_wait_log "back on air after down" 10 || { tbd_dump; tb_fail "no re-arm after down"; }
sleep 1
tbd_observe_stop
tbd_recovery "$t" || { tbd_dump; tb_fail "beacon not heard after down"; }
hciconfig hci0 | grep -q "UP RUNNING" || tb_fail "hci0 is not up again"
tbd_alive
tbd_finish
tb_pass "down: heard again ${TBD_BACK} ms after hciconfig down (off air ${TBD_GAP} ms; target ≤ 1000 ms)"

# SPEC §5: advertising disabled by another process is re-enabled (target ≤ 2 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start >/dev/null
tbd_observe_bg "$TB_RIG_HEX"
t=$(tb_now_ms)
tb_fault_adv_disable
tbd_wait_log "back on air after disabled" 10 || { tbd_dump; tb_fail "no re-arm after another process disabled advertising"; }
sleep 1
tbd_observe_stop
tbd_recovery "$t" || { tbd_dump; tb_fail "beacon not heard after disable"; }
tbd_alive
tbd_finish
tb_pass "disabled: heard again ${TBD_BACK} ms after the foreign disable (off air ${TBD_GAP} ms; target ≤ 2000 ms)"

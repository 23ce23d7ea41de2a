# SPEC §5: advertising data overwritten by another process is restored (target ≤ 2 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start >/dev/null
tbd_observe_bg "$TB_RIG_HEX"
t=$(tb_now_ms)
tb_fault_adv_overwrite
tbd_wait_log "back on air after overwritten" 10 || { tbd_dump; tb_fail "no re-arm after another process overwrote the data"; }
sleep 1
tbd_observe_stop
tbd_recovery "$t" || { tbd_dump; tb_fail "our payload not heard after the overwrite"; }
tbd_alive
tbd_finish
tb_pass "overwritten: our payload heard again ${TBD_BACK} ms after the foreign write (absent ${TBD_GAP} ms; target ≤ 2000 ms)"

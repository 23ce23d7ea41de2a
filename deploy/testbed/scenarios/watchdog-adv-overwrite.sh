# SPEC §5: advertising data overwritten by another process is restored (target ≤ 2 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
t=$(tb_now_ms)
tb_fault_adv_overwrite
tbd_recovered "$t" "back on air after overwritten"
tbd_alive
tbd_finish
tb_pass "overwritten: our payload heard again ${TBD_BACK} ms after the foreign write began (target ≤ 2000 ms)"

# SPEC §5: advertising disabled by another process is re-enabled (target ≤ 2 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
t=$(tb_now_ms)
tb_fault_adv_disable
tbd_recovered "$t" "back on air after disabled"
tbd_alive
tbd_finish
tb_pass "disabled: heard again ${TBD_BACK} ms after the foreign disable began (target ≤ 2000 ms)"

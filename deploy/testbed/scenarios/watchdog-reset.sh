# SPEC §5: a controller reset by someone else (hciconfig hci0 reset) is re-armed (target ≤ 1 s).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
t=$(tb_now_ms)
tb_fault_reset
tbd_recovered "$t" "back on air after reset"
tbd_alive
tbd_finish
tb_pass "reset: heard again ${TBD_BACK} ms after hciconfig reset began (target ≤ 1000 ms)"

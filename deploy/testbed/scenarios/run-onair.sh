# altbeacond run puts the SPEC §3 beacon on air (LE-only controller) with the exact payload;
# SIGTERM takes it off air and the daemon exits 0.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
tb_log "heard on hci1 ${TBD_START_MS} ms after process start"
tbd_finish
grep -q "SIGTERM: taking the beacon off air" /tmp/altbeacond.log || { tbd_dump; tb_fail "no SIGTERM handling logged"; }
tbd_assert_off_air
tb_pass "on air in ${TBD_START_MS} ms; off air after SIGTERM"

# altbeacond run puts the SPEC §3 beacon on air (LE-only controller); SIGTERM takes it off air.
. "$TB_REPO/deploy/testbed/lib.sh"

cat >/tmp/c.toml <<'TOML'
[beacon]
uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
major = 1
minor = 2
TOML
t0=$(tb_now_ms)
tb_daemon_start run --config /tmp/c.toml
ms=$(tb_wait_heard "$TB_RIG_HEX" 10000 "$t0") || { cat /tmp/altbeacond.log; tb_fail "beacon not heard within 10 s"; }
tb_log "heard on hci1 ${ms} ms after process start"
tb_daemon_stop; rc=$?
cat /tmp/altbeacond.log
[ "$rc" = 0 ] || tb_fail "daemon exited $rc after SIGTERM"
tb_assert_silent 1500 "$TB_RIG_HEX"
tb_pass "on air in ${ms} ms; off air after SIGTERM"

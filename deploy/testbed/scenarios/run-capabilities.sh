# As a non-root user with only CAP_NET_RAW and CAP_NET_ADMIN the beacon goes on air; without
# them the daemon exits 77 naming both.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
chmod 644 "$TBD_CONFIG"
rc=0
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$ALTBEACOND_BIN" run --config "$TBD_CONFIG" >/tmp/nocaps.log 2>&1 || rc=$?
cat /tmp/nocaps.log
[ "$rc" = 77 ] || tb_fail "without capabilities: exit $rc, expected 77"
grep -q CAP_NET_RAW /tmp/nocaps.log && grep -q CAP_NET_ADMIN /tmp/nocaps.log || tb_fail "message does not name both capabilities"
t0=$(tb_now_ms)
# setpriv directly (not a shell function) so that $! is the daemon itself
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+net_raw,+net_admin \
  --ambient-caps=+net_raw,+net_admin -- "$ALTBEACOND_BIN" run --config "$TBD_CONFIG" >>/tmp/altbeacond.log 2>&1 </dev/null &
TB_DAEMON_PID=$!
ms=$(tb_wait_heard "$TB_RIG_HEX" 10000 "$t0") || { tbd_dump; tb_fail "not heard as nobody with the two capabilities"; }
tbd_finish
tbd_assert_off_air
tb_pass "nobody + CAP_NET_RAW/CAP_NET_ADMIN: on air in ${ms} ms; no capabilities: exit 77"

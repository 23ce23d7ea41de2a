# timeout: 120
# SPEC §10, `altbeacond calibrate`: BlueZ's emulator reports every advert with RSSI 127 ("not
# available"), so calibrate must refuse clearly instead of printing a power line (its arithmetic is
# unit-tested: CalibrationTests); a missing adapter is named; the beacon is not disturbed.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
"$ALTBEACOND_BIN" calibrate --adapter hci1 --seconds 3 >/tmp/cal.out 2>/tmp/cal.err; rc=$?
[ "$rc" = 1 ] || { cat /tmp/cal.out /tmp/cal.err; tb_fail "calibrate exited $rc on a controller without RSSI"; }
grep -q "hci1 reports no RSSI (127" /tmp/cal.err || { cat /tmp/cal.err; tb_fail "the refusal does not say why"; }
[ ! -s /tmp/cal.out ] || { cat /tmp/cal.out; tb_fail "calibrate printed figures without RSSI"; }
"$ALTBEACOND_BIN" calibrate --adapter hci7 --seconds 2 >/dev/null 2>/tmp/cal7.err; rc=$?
[ "$rc" = 69 ] && grep -q "hci7" /tmp/cal7.err || { cat /tmp/cal7.err; tb_fail "calibrate on a missing adapter exited $rc"; }
tbd_alive
tb_wait_heard "$TB_RIG_HEX" 3000 >/dev/null || tb_fail "the beacon is off air"
tbd_finish
tb_pass "calibrate: refused on RSSI 127 ('$(head -c 120 /tmp/cal.err | tail -1)'), exit 1; missing adapter: exit 69; the beacon stayed on air"

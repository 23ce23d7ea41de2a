# SPEC §5/§8: bluetoothd starting and restarting (which silently ends raw-HCI advertising) is
# noticed and the beacon re-armed.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
tb_bluetoothd_start || tb_fail "bluetoothd did not start"
sleep 2
ms=$(tb_wait_heard "$TB_RIG_HEX" 5000) || { tbd_dump; tb_fail "beacon not heard after bluetoothd started"; }
t=$(tb_now_ms)
tb_bluetoothd_restart || tb_fail "bluetoothd did not restart"
sleep 2
tb_wait_heard "$TB_RIG_HEX" 5000 >/dev/null || { tbd_dump; tb_fail "beacon not heard after bluetoothd restarted"; }
tbd_alive
grep -E "back on air|re-arm" /tmp/altbeacond.log | tail -5
tbd_finish
tb_pass "on air with bluetoothd started and restarted"

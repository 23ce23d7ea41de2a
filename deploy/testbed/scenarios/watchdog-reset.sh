# SPEC §5: a controller reset by someone else is re-armed (target ≤ 1 s). Two kinds: a raw HCI
# Reset command from another process (hcitool cmd 0x03 0x0003: the controller forgets its
# advertising, the kernel keeps the adapter up), and `hciconfig hci0 reset`, which is down + up.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
t=$(tb_now_ms)
st=$(_tb_hcicmd hci0 0x03 0x0003)
[ "$st" = 00 ] || tb_fail "raw HCI Reset answered status $st"
tbd_recovered "$t" "back on air after reset"
raw=$TBD_BACK
t=$(tb_now_ms)
tb_fault_reset
# hciconfig's reset is HCIDEVDOWN then HCIDEVUP: the daemon may see it as either.
tbd_wait_log "back on air after down\|re-arms: reset 2" 10 || { tbd_dump; tb_fail "no re-arm after hciconfig reset"; }
heard=$(tb_wait_heard "$TB_RIG_HEX" 5000) || { tbd_dump; tb_fail "beacon not heard after hciconfig reset"; }
tbd_alive
tbd_finish
tb_pass "reset: heard again ${raw} ms after a raw HCI Reset, $((heard - t)) ms after hciconfig reset began (target ≤ 1000 ms)"

# SPEC §5: the adapter brought down (hciconfig hci0 down) is brought up and re-armed (target ≤ 1 s).
# (btvirt keeps advertising while the host side is down; the kernel's reset on the way up is what
# silences a beacon that nobody re-arms.)
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
t=$(tb_now_ms)
tb_fault_down
tbd_recovered "$t" "back on air after down"
hciconfig hci0 | grep -q "UP RUNNING" || tb_fail "hci0 is not up again"
tbd_alive
tbd_finish
tb_pass "down: up and heard again ${TBD_BACK} ms after hciconfig down began (target ≤ 1000 ms)"

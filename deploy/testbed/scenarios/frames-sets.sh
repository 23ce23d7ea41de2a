# flavour: bt5
# timeout: 240
# SPEC §3: on a Bluetooth 5 controller with LE extended advertising, one advertising set per
# frame, all on air at once (btvirt has 3 sets: AltBeacon, iBeacon and Eddystone-URL each get
# one); another process overwriting one set is repaired; a reset re-arms every set. With all 5
# frames, the 3 sets carry them and the last set takes its frames in turn.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/frames-lib.sh"
tbd_config "[ibeacon]" "major = 7" "[eddystone]" 'url = "https://www.example.com/"' "[watchdog]" "check_interval_s = 600"
tbd_start
grep -q "extended, sets 2 1 0" /tmp/altbeacond.log || { tbd_dump; tb_fail "not one set per frame"; }
grep -q "in turn" /tmp/altbeacond.log && { tbd_dump; tb_fail "frames rotate although every frame has a set"; }
first=$(tbd_wait_frames 10000 "$TB_RIG_HEX" "$TBF_IBEACON" "$TBF_URL") || { tbd_dump; tb_fail "not every set heard"; }
# another process overwrites set 1 (the iBeacon's)
t=$(tb_now_ms)
st=$(_tb_hcicmd hci0 0x08 0x0037 01 03 01 0d 02 01 06 09 09 69 6e 74 72 75 64 65 72)
[ "$st" = 00 ] || tb_fail "foreign LE Set Extended Advertising Data answered $st"
tbd_wait_log "back on air after overwritten" 10 || { tbd_dump; tb_fail "overwritten set not repaired"; }
fixed=$(tbd_wait_frames 10000 "$TB_RIG_HEX" "$TBF_IBEACON" "$TBF_URL") || { tbd_dump; tb_fail "not every set heard after the repair"; }
t=$(tb_now_ms)
[ "$(_tb_hcicmd hci0 0x03 0x0003)" = 00 ] || tb_fail "raw HCI Reset refused"
tbd_wait_log "back on air after reset" 10 || { tbd_dump; tb_fail "no re-arm after a reset"; }
back=$(tbd_wait_frames 10000 "$TB_RIG_HEX" "$TBF_IBEACON" "$TBF_URL") || { tbd_dump; tb_fail "not every set heard after a reset"; }
# an edit of one frame re-sends only that frame's set (counted on the HCI monitor with btmon; not
# with its -i filter, which let the observer's hci1 commands through once in CI: every command
# line carries its own [hciN] tag instead)
btmon >/tmp/btmon.txt 2>&1 &
bpid=$!
_tb_sleep 1
sed -i 's/^major = 7$/major = 8/' "$TBD_CONFIG"
edit=$(tbd_wait_frames 10000 "$TBF_IBEACON8" "$TB_RIG_HEX" "$TBF_URL") || { tbd_dump; tb_fail "edited iBeacon not heard"; }
_tb_sleep 0.5
kill "$bpid"; wait "$bpid" 2>/dev/null
sent=$(grep '< HCI Command:.*\[hci0\]' /tmp/btmon.txt | grep -c '(0x08|0x0037)')
other=$(grep '< HCI Command:.*\[hci0\]' /tmp/btmon.txt | grep -vc '(0x08|0x0037)')
[ "$(grep -c '< HCI Command:.*\[hci1\]' /tmp/btmon.txt)" -gt 0 ] || { cat /tmp/btmon.txt; tb_fail "btmon showed no observer command: are its lines still tagged [hciN]?"; }
[ "$sent" = 1 ] && [ "$other" = 0 ] || { cat /tmp/btmon.txt; tb_fail "the edit sent $sent data commands and $other others, expected 1 and 0"; }
tbd_finish
tb_assert_silent 1500
# all five frames on three sets
tb_btvirt_stop && tb_btvirt_start bt5 || tb_fail "btvirt did not restart"
tbf_config "rotation_ms = 300"
: >/tmp/altbeacond.log
tbd_start
grep -q "extended, sets 2 1 0, 3 frames in turn" /tmp/altbeacond.log || { tbd_dump; tb_fail "5 frames on 3 sets: not laid out as expected"; }
five=$(tbd_wait_frames 15000 "${TBF_ALL[@]}") || { tbd_dump; tb_fail "not every frame heard on 3 sets"; }
tbd_finish
tb_pass "sets: 3 frames on 3 sets heard within ${first} ms; an edit of one frame: 1 command, heard in ${edit} ms; overwritten set repaired (all heard ${fixed} ms later); all back ${back} ms after a reset; 5 frames on 3 sets heard within ${five} ms"

# flavour: le
# timeout: 240
# SPEC §3: on a legacy-only controller (no LE extended advertising, like the Pi 3/4/Zero 2 W) the
# frames take turns, rotation_ms each: AltBeacon, iBeacon, Eddystone-UID, -URL and -TLM are all
# heard on hci1; TLM carries a growing uptime and count; a controller reset re-arms every frame;
# an edit of one frame puts the new bytes on air; `altbeacond scan` lists every frame type;
# SIGTERM takes them all off air.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/frames-lib.sh"
tbf_config "rotation_ms = 300"
tbd_start
grep -q "5 frames in turn" /tmp/altbeacond.log || { tbd_dump; tb_fail "the frames do not take turns"; }
first=$(tbd_wait_frames 15000 "${TBF_ALL[@]}") || { tbd_dump; tb_fail "not every frame heard"; }
c1=$(tbd_tlm_field count) u1=$(tbd_tlm_field uptime) temp=$(tbd_tlm_field temp)
[ "$(tbd_tlm_field battery)" = 0000 ] || tb_fail "TLM battery should be 0 (mains powered)"
sleep 2
tbd_wait_frames 10000 "$TBF_TLM" >/dev/null || { tbd_dump; tb_fail "TLM not heard again"; }
c2=$(tbd_tlm_field count) u2=$(tbd_tlm_field uptime)
[ "$u1" -gt 0 ] && [ "$u2" -gt "$u1" ] && [ "$c2" -gt "$c1" ] \
  || tb_fail "TLM uptime/count do not grow: uptime $u1 -> $u2, count $c1 -> $c2"
tb_log "TLM: uptime $u1 -> $u2 (0.1 s), count $c1 -> $c2, temperature 0x$temp"
# the watchdog covers every frame
t=$(tb_now_ms)
[ "$(_tb_hcicmd hci0 0x03 0x0003)" = 00 ] || tb_fail "raw HCI Reset refused"
tbd_wait_log "back on air after reset" 10 || { tbd_dump; tb_fail "no re-arm after a reset"; }
back=$(tbd_wait_frames 15000 "${TBF_ALL[@]}") || { tbd_dump; tb_fail "not every frame heard after a reset"; }
# an edit of one frame
sed -i 's/^major = 7$/major = 8/' "$TBD_CONFIG"
edit=$(tbd_wait_frames 10000 "$TBF_IBEACON8" "$TB_RIG_HEX" "$TBF_UID") || { tbd_dump; tb_fail "edited iBeacon not heard"; }
# altbeacond scan on hci1 recognises every frame type
tb_rearmed "$ALTBEACOND_BIN" scan --adapter hci1 --json --timeout 5 >/tmp/scan.json 2>/tmp/scan.err || { cat /tmp/scan.err; tb_fail "scan failed"; }
for t in altbeacon ibeacon eddystone-uid eddystone-url eddystone-tlm; do
  grep -q "\"type\":\"$t\"" /tmp/scan.json || { cat /tmp/scan.json /tmp/scan.err; tb_fail "scan did not list a $t frame"; }
done
grep -q '"url":"https://www.example.com/"' /tmp/scan.json || { cat /tmp/scan.json; tb_fail "scan did not decode the URL"; }
tb_log "scan: $(grep -o '"type":"[a-z-]*"' /tmp/scan.json | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
tbd_alive
tbd_finish
tb_assert_silent 1500
tb_pass "rotation (300 ms): all 5 frames heard within ${first} ms of the first; again ${back} ms after a reset; edit heard within ${edit} ms; silent after SIGTERM"

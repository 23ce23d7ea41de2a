# altbeacond scan (issue 8): `altbeacond run` on hci0 and `altbeacond scan` on hci1 agree; three
# scans started at once on hci1 beside an observer re-arming it every 10 ms (a command refused
# with Command Disallowed while another program enables scanning in between is asked again) all
# start, in legacy commands, and all list the beacon.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config 'power = -65' 'company_id = 0x004c' 'reserved = 7'   # appended to [beacon]
cat "$TBD_CONFIG"
hex=$("$ALTBEACOND_BIN" check --config "$TBD_CONFIG" | sed -n 's/^advertising-data: //p')
tbd_start "$hex" >/dev/null
rc=0; "$ALTBEACOND_BIN" scan --adapter hci1 --json --timeout 5 >/tmp/scan.json 2>/tmp/scan.err || rc=$?
cat /tmp/scan.err; head -2 /tmp/scan.json
[ "$rc" = 0 ] || { tbd_dump; tb_fail "scan exited $rc"; }
grep -Eq '"uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":1,"minor":2,"rssi":(-[0-9]+|null),"power":-65,"company_id":76,"reserved":7,' /tmp/scan.json \
  || { tbd_dump; tb_fail "scan does not agree with the daemon's beacon"; }
# an observer re-arming hci1 every 10 ms beside them: scan starts meet another program's scan
# (the scan before 8d35f11, one immediate retry then extended commands, failed 1 of 4 runs here,
# 2 of 5 with two such observers, which slowed the aarch64 guest to 77 s; the retry itself is
# pinned by ScannerTests)
tb_observe_bg /dev/null --timeout 60000 --poll 10
rearm=$TB_OBSERVE_PID
for i in 1 2 3; do
  ALTBEACOND_DEBUG=1 "$ALTBEACOND_BIN" scan --adapter hci1 --json --timeout 4 >/tmp/scan$i.json 2>/tmp/scan$i.err &
  pids[i]=$!
done
busy=0
for i in 1 2 3; do
  rc=0; wait "${pids[i]}" || rc=$?
  [ "$rc" = 0 ] || { cat /tmp/scan$i.err; tb_fail "scan $i of 3 at once exited $rc"; }
  grep -q '"uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":1,"minor":2,' /tmp/scan$i.json \
    || { cat /tmp/scan$i.err /tmp/scan$i.json; tb_fail "scan $i of 3 at once did not list the beacon"; }
  if grep -q "extended scan commands" /tmp/scan$i.err; then cat /tmp/scan$i.err; tb_fail "scan $i of 3 at once went to extended commands"; fi
  busy=$((busy + $(grep -c "refused while another scan changes" /tmp/scan$i.err || true)))
done
kill "$rearm"; wait "$rearm" 2>/dev/null
tb_log "3 scans at once: each listed the beacon; $busy commands refused while another scan changed, asked again"
tbd_alive
tbd_finish
tb_pass "run on hci0 and scan on hci1 agree (uuid, major, minor, power -65, company 0x004c, reserved 7); 3 scans at once all listed it ($busy refusals waited out)"

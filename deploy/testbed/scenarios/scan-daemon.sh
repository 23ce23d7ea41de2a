# altbeacond scan (issue 8): `altbeacond run` on hci0 and `altbeacond scan` on hci1 agree.
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
tbd_alive
tbd_finish
tb_pass "run on hci0 and scan on hci1 agree (uuid, major, minor, power -65, company 0x004c, reserved 7)"

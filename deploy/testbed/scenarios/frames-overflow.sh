# flavour: le
# timeout: 240
# SPEC §3, "the receivers in the seed documents": the Overflow Area frame that Radius Networks'
# OverflowAreaBeaconRef detects in the background, with iBeacon beside it carrying the same major
# and minor (the reference app's "fused beacon"), on a legacy-only controller: AltBeacon, iBeacon
# and the Overflow Area take turns and each is heard byte-exact on hci1; `altbeacond scan` lists
# type overflow-area with the major, minor and matching byte; an edit of the matching byte puts
# the new bytes on air; SIGTERM takes everything off air.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/frames-lib.sh"
# Written out from SPEC §3, not taken from `check`: flags 02 01 06; a manufacturer-specific AD of
# 0x14 bytes: company 4c 00 (Apple), type 01 (overflow area), then the 16-byte area at position 0:
# 01 (bit 0), the matching byte (aa), major 0007 and minor 0002 big-endian (the [ibeacon] table's:
# major = 7, minor from [beacon]), ten bytes of 00.
overflow=02010614ff4c000101aa0007000200000000000000000000
# The same with matching_byte = 0x5A.
overflow5a=02010614ff4c0001015a0007000200000000000000000000
[ ${#overflow} = 48 ] && [ ${#overflow5a} = 48 ] || tb_fail "the expected frames are not 24 bytes"
tbd_config "[ibeacon]" "major = 7" "[bluetooth]" "rotation_ms = 300" "[overflow]"
"$ALTBEACOND_BIN" check --config "$TBD_CONFIG" >/tmp/check.txt || { cat /tmp/check.txt; tb_fail "check refused the config"; }
grep -qx "advertising-data\[overflow-area\]: $overflow" /tmp/check.txt || { cat /tmp/check.txt; tb_fail "check shows other overflow-area bytes"; }
tbd_start
grep -q "3 frames in turn" /tmp/altbeacond.log || { tbd_dump; tb_fail "the three frames do not take turns"; }
first=$(tbd_wait_frames 15000 "$TB_RIG_HEX" "$TBF_IBEACON" "$overflow") || { tbd_dump; tb_fail "not every frame heard"; }
# Nothing else from hci0 that looks like an overflow area (a padded or cut copy would not match above).
heard=$(grep -ao ' 02010614ff4c0001[0-9a-f]*$' "$TBD_FRAMES" | sort -u | tr -d ' ')
[ "$heard" = "$overflow" ] || { echo "$heard"; tb_fail "other overflow-area payloads heard"; }
n=$(grep -ac " $overflow\$" "$TBD_FRAMES")
tb_log "heard the Overflow Area frame $n times (byte-exact), with AltBeacon and iBeacon, within ${first} ms"
# altbeacond scan on hci1: the frame as the reference app's detector reads it
tb_rearmed "$ALTBEACOND_BIN" scan --adapter hci1 --json --timeout 5 >/tmp/scan.json 2>/tmp/scan.err || { cat /tmp/scan.err; tb_fail "scan failed"; }
grep -q '"type":"overflow-area","matching_byte":170,"major":7,"minor":2,' /tmp/scan.json \
  || { cat /tmp/scan.json /tmp/scan.err; tb_fail "scan did not list the overflow-area frame with major 7, minor 2, matching byte 170"; }
grep '"type":"overflow-area"' /tmp/scan.json | grep -q '"position":0,' || { cat /tmp/scan.json; tb_fail "scan did not find position 0"; }
grep -q '"type":"ibeacon","uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":7,"minor":2,' /tmp/scan.json \
  || { cat /tmp/scan.json; tb_fail "scan did not list the iBeacon beside it"; }
grep '"type":"overflow-area"' /tmp/scan.json | grep -qv '"matching_byte":170,"major":7,"minor":2,' \
  && { cat /tmp/scan.json; tb_fail "scan listed an overflow-area frame with other numbers"; }
# The plain-line form names it too.
tb_rearmed "$ALTBEACOND_BIN" scan --adapter hci1 --timeout 3 >/tmp/scan.txt 2>/tmp/scan.err || { cat /tmp/scan.err; tb_fail "scan (lines) failed"; }
grep -q '^new 0xaa major=7 minor=2 .*position=0 .*type=overflow-area$' /tmp/scan.txt || { cat /tmp/scan.txt; tb_fail "scan's plain line for the overflow-area frame"; }
tb_log "scan: $(grep -o '"type":"[a-z-]*"' /tmp/scan.json | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
# an edit of the matching byte (renamed into place, as editors save)
sed -i 's/^\[overflow\]$/[overflow]\nmatching_byte = 0x5A/' "$TBD_CONFIG"
edit=$(tbd_wait_frames 10000 "$overflow5a" "$TB_RIG_HEX" "$TBF_IBEACON") || { tbd_dump; tb_fail "edited Overflow Area frame not heard"; }
tbd_alive
tbd_finish
tb_assert_silent 1500
tb_pass "fused beacon (300 ms turns): AltBeacon, iBeacon and the Overflow Area heard byte-exact within ${first} ms ($n overflow reports); scan lists overflow-area 0xaa major 7 minor 2 position 0; matching byte edit heard within ${edit} ms; silent after SIGTERM"

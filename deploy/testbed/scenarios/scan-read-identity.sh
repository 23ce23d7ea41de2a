# flavour: le
# timeout: 300
# SPEC §3, the iOS AltBeacon library's central: `altbeacond scan --read-identity` on hci1 lists the
# daemon's GATT identity on hci0 as type gatt-identity (with the name from its scan response:
# the scan is active with --read-identity), connects, finds the service by UUID, reads the first
# characteristic and prints the identifier (--json and plain lines), once per device; the scan
# goes on after the read (the AltBeacon frame is listed too) and exits 0. Without the flag the
# identity is listed, unread, and the scan stays passive. Then bluetoothd serves hci0 behind raw
# connectable advertising of the identity's bytes (hcitool): its GATT database has no identity
# service, and the read fails with one clear line, the scan going on.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/lib-gatt.sh"
B=$ALTBEACOND_BIN
id="altbeacond-test-identity"
tbd_config "[gatt_identity]" "identifier = \"$id\"" "[bluetooth]" "rotation_ms = 300"
tbd_start
addr=$(tbg_addr)

# --json: the identity listed (named), then read; the AltBeacon frame listed as well.
rc=0; "$B" scan --adapter hci1 --timeout 8 --read-identity --json >/tmp/scan.json 2>/tmp/scan.err || rc=$?
cat /tmp/scan.err; cat /tmp/scan.json
[ "$rc" = 0 ] || { tbd_dump; tb_fail "scan --read-identity --json exited $rc"; }
grep -q "^{\"type\":\"gatt-identity\",\"rssi\":[^,]*,\"name\":\"AltBeacon\",\"address\":\"$addr\"," /tmp/scan.json \
  || { tbd_dump; tb_fail "the identity is not listed with its name"; }
want="{\"type\":\"gatt-identity\",\"address\":\"$addr\",\"identifier\":\"$id\",\"name\":\"AltBeacon\"}"
grep -qxF "$want" /tmp/scan.json || { tbd_dump; tb_fail "no line $want"; }
[ "$(grep -c '"identifier":' /tmp/scan.json)" = 1 ] || tb_fail "the identity was read more than once"
grep -q '"error":' /tmp/scan.json && tb_fail "an error line"
# Listed after the read too: the scan was resumed.
awk -v w="$want" '$0 == w { r = 1; next } r && /"type":"altbeacon"/ { f = 1 } END { exit !f }' /tmp/scan.json \
  || { tbd_dump; tb_fail "nothing listed after the read: scanning not resumed"; }
grep -q "active" /tmp/scan.err || tb_fail "the log does not say the scan is active"
tbd_wait_log "central disconnected" 10 || { tbd_dump; tb_fail "the daemon saw no disconnection"; }
tb_log "json ok"

# Plain lines.
rc=0; "$B" scan --adapter hci1 --timeout 8 --read-identity >/tmp/scan.txt 2>/dev/null || rc=$?
cat /tmp/scan.txt
[ "$rc" = 0 ] || tb_fail "plain scan --read-identity exited $rc"
grep -qxF "identity $addr \"$id\" name=AltBeacon" /tmp/scan.txt || { tbd_dump; tb_fail "no plain identity line"; }
grep -q "^new $addr rssi=[^ ]* name=[^ ]* distance_m=- proximity=[a-z]* address=$addr type=gatt-identity$" /tmp/scan.txt \
  || tb_fail "no plain gatt-identity line"

# Without --read-identity: listed, passive (no scan response, so no name), never connected.
n=$(grep -c "central connected" /tmp/altbeacond.log)
rc=0; "$B" scan --adapter hci1 --timeout 3 --json >/tmp/scan2.json 2>/tmp/scan2.err || rc=$?
cat /tmp/scan2.json
[ "$rc" = 0 ] || tb_fail "scan --json exited $rc"
grep -q "^{\"type\":\"gatt-identity\",\"rssi\":[^,]*,\"name\":null,\"address\":\"$addr\"," /tmp/scan2.json || tb_fail "not listed by a passive scan"
grep -q '"identifier":' /tmp/scan2.json && tb_fail "read without --read-identity"
grep -q "passive" /tmp/scan2.err || tb_fail "the log does not say the scan is passive"
[ "$(grep -c "central connected" /tmp/altbeacond.log)" = "$n" ] || tb_fail "a plain scan connected"
tbd_alive
tbd_finish

# bluetoothd serving hci0 behind raw connectable advertising: no identity service there.
tb_bluetoothd_start || tb_fail "bluetoothd did not start"
hciconfig hci0 up
adv=$(echo "$TBG_ADV" | sed 's/../& /g'); rsp=$(echo "$TBG_RSP" | sed 's/../& /g')
pad() { local i n=$1; for ((i = n; i < 31; i++)); do printf '00 '; done; }
# Each command until it succeeds: bluetoothd's own start-up commands can hold the controller's
# queue past _tb_hcicmd's 5 s (seen on the aarch64 testbed, BlueZ 5.82).
rawcmd() {
  local what=$1 st i
  shift
  for i in 1 2 3; do
    st=$(_tb_hcicmd hci0 0x08 "$@")
    echo "$what: $st"
    [ "$st" = 00 ] && return 0
    _tb_sleep 1
  done
  tb_fail "raw connectable advertising on hci0: $what failed"
}
# shellcheck disable=SC2086
rawcmd "adv parameters" 0x0006 a0 00 a0 00 00 00 00 00 00 00 00 00 00 07 00
# shellcheck disable=SC2086
rawcmd "adv data" 0x0008 15 $adv $(pad 21)
# shellcheck disable=SC2086
rawcmd "scan response" 0x0009 0b $rsp $(pad 11)
rawcmd "adv enable" 0x000a 01
rc=0; "$B" scan --adapter hci1 --timeout 8 --read-identity --json >/tmp/scan3.json 2>/tmp/scan3.err || rc=$?
cat /tmp/scan3.err; cat /tmp/scan3.json
[ "$rc" = 0 ] || tb_fail "scan against bluetoothd exited $rc"
want="{\"type\":\"gatt-identity\",\"address\":\"$addr\",\"error\":\"service missing: no primary service 8C422626-0C6E-4B86-8EC7-9147B233D97E\",\"name\":\"AltBeacon\"}"
grep -qxF "$want" /tmp/scan3.json || tb_fail "no line $want"
grep -q "scan ended" /tmp/scan3.err && tb_fail "scanning did not resume"
tb_bluetoothd_stop

# The identity's bytes advertised non-connectably (ADV_NONCONN_IND): listed, but the kernel never
# connects: a timeout line after 10 s, then the scan goes on (the advert is listed again).
tb_studyguide_start hci0 "$TBG_ADV" || tb_fail "non-connectable advertising failed on hci0"
rc=0; "$B" scan --adapter hci1 --timeout 16 --read-identity --json >/tmp/scan4.json 2>/tmp/scan4.err || rc=$?
cat /tmp/scan4.err; cat /tmp/scan4.json
[ "$rc" = 0 ] || tb_fail "scan of a non-connectable identity exited $rc"
want="{\"type\":\"gatt-identity\",\"address\":\"$addr\",\"error\":\"timeout: no connection within 10 s\",\"name\":null}"
grep -qxF "$want" /tmp/scan4.json || tb_fail "no line $want"
awk -v w="$want" '$0 == w { r = 1; next } r && /"type":"gatt-identity","rssi"/ { f = 1 } END { exit !f }' /tmp/scan4.json \
  || tb_fail "nothing listed after the timeout: scanning not resumed"
ms=$(sed -n 's/.*not read in \([0-9]*\) ms/\1/p' /tmp/scan4.err)
tb_pass "identity listed (named) and read once: \"$id\" (json and plain), scan resumed after it; passive without the flag; bluetoothd's database: service missing; non-connectable: timeout after $ms ms, scan went on"

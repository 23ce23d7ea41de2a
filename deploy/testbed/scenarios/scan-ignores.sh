# altbeacond scan (issue 8, 16): an iBeacon on hci0 is listed as type ibeacon, never as an
# AltBeacon; malformed manufacturer data of every
# length 0-31 (raw LE Set Advertising Data on hci0, one after another) does not crash the scanner,
# which lists a valid beacon afterwards and exits 0 on SIGINT; then a scan with --timeout exits 0,
# and scanning is off on hci1 after each exit (a disable is refused as already disabled, and a
# second scan starts at once).
. "$TB_REPO/deploy/testbed/lib.sh"
B=$ALTBEACOND_BIN
IB=0201061aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600010002c5
tb_studyguide_start hci0 "$IB" || tb_fail "iBeacon setup failed"
tb_wait_heard "$IB" 5000 >/dev/null || tb_fail "iBeacon not on air"

adv() {   # adv HEX: LE Set Advertising Data on hci0, advertising toggled around it (btvirt
  # reports an advertiser when it is enabled, not periodically); bare hcitool: execs are slow
  local hex=$1 bytes
  bytes=$(echo "$hex" | sed 's/../& /g')
  hcitool -i hci0 cmd 0x08 0x000a 00 >/dev/null 2>&1
  # shellcheck disable=SC2086
  hcitool -i hci0 cmd 0x08 0x0008 "$(printf '%02x' $((${#hex} / 2)))" $bytes $(_tb_zeros $((31 - ${#hex} / 2))) >/dev/null 2>&1
  hcitool -i hci0 cmd 0x08 0x000a 01 >/dev/null 2>&1
}

"$B" scan --adapter hci1 --json >/tmp/scan.json 2>/tmp/scan.err </dev/null &
pid=$!
_tb_sleep 2
adv "$IB"   # heard again now that the scanner runs
_tb_sleep 1
grep -q '"type":"ibeacon","uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":1,"minor":2,' /tmp/scan.json \
  || { cat /tmp/scan.json /tmp/scan.err; tb_fail "iBeacon not listed as type ibeacon"; }
grep -q '"type":"altbeacon"' /tmp/scan.json && { cat /tmp/scan.json; tb_fail "iBeacon taken for an AltBeacon"; }
tb_log "iBeacon listed as an iBeacon, not an AltBeacon"
listed=$(wc -l </tmp/scan.json)

# Every length 0-31: the AltBeacon AD (0x1b ff ...) cut short for 0-27 bytes (its length byte
# claims more than is there); then an AD claiming 28 bytes, cut at 28 and 29, and complete at 30
# and 31 (manufacturer data one byte too long for an AltBeacon).
A=1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500
Bh=1cff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500eeeeee
t0=$(tb_now_ms)
for ((l = 0; l <= 31; l++)); do if [ $l -le 27 ]; then adv "${A:0:$((2 * l))}"; else adv "${Bh:0:$((2 * l))}"; fi; done
tb_log "32 payloads sent in $(($(tb_now_ms) - t0)) ms"
_tb_alive "$pid" || { cat /tmp/scan.err; tb_fail "scanner died on malformed data"; }
[ "$(wc -l </tmp/scan.json)" = "$listed" ] || { cat /tmp/scan.json; tb_fail "malformed data listed"; }
tb_log "malformed payloads of lengths 0-31: scanner alive, nothing listed"

adv "$TB_RIG_HEX"
for ((i = 0; i < 60; i++)); do grep -q '"minor":2,' /tmp/scan.json && break; _tb_sleep 0.1; done
grep -q '"uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6","major":1,"minor":2,' /tmp/scan.json \
  || { cat /tmp/scan.err; tb_fail "valid beacon not listed after the malformed ones"; }
kill -INT "$pid"; rc=0; wait "$pid" || rc=$?
cat /tmp/scan.err
[ "$rc" = 0 ] || tb_fail "scan exited $rc after SIGINT"
st=$(_tb_hcicmd hci1 0x08 0x000c 00 00)
tb_log "LE Set Scan Enable 0 on hci1 after SIGINT: status $st"
[ "$st" = 0C ] || tb_fail "scanning still enabled on hci1 after SIGINT (disable answered $st)"

rc=0; "$B" scan --adapter hci1 --json --timeout 2 >/tmp/scan2.json 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat /tmp/scan2.json; tb_fail "second scan exited $rc"; }
grep -q '"minor":2,' /tmp/scan2.json || tb_fail "second scan did not list the beacon"
st=$(_tb_hcicmd hci1 0x08 0x000c 00 00)
[ "$st" = 0C ] || tb_fail "scanning still enabled on hci1 after --timeout (disable answered $st)"
tb_pass "iBeacon listed as such; malformed payloads of lengths 0-31 survived; valid beacon listed; SIGINT and --timeout exit 0 with scanning off"

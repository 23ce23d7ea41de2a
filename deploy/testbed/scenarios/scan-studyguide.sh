# altbeacond scan (issue 8): the study-guide beacon sent by hcitool on hci0 is listed from hci1
# with the right fields (--json and plain lines); a missing adapter exits 69 naming it; missing
# capabilities exit 77 naming CAP_NET_RAW and CAP_NET_ADMIN; with just those two it scans.
. "$TB_REPO/deploy/testbed/lib.sh"
B=$ALTBEACOND_BIN
tb_studyguide_start hci0 || tb_fail "study-guide sequence failed on hci0"

rc=0; "$B" scan --adapter hci1 --json --timeout 3 >/tmp/scan.json 2>/tmp/scan.err || rc=$?
cat /tmp/scan.err; head -3 /tmp/scan.json
[ "$rc" = 0 ] || tb_fail "scan --json --timeout 3 exited $rc"
line=$(grep -m1 '"uuid":"2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"' /tmp/scan.json) || tb_fail "beacon not listed in --json output"
for f in '"major":1,' '"minor":2,' '"power":-59,' '"company_id":280,' '"reserved":0,' '"rssi":' '"address":"' '"proximity":"'; do
  case "$line" in *"$f"*) ;; *) tb_fail "--json line lacks $f: $line" ;; esac
done
tb_log "json ok"

rc=0; "$B" scan --adapter hci1 --timeout 2 >/tmp/scan.txt 2>/dev/null || rc=$?
cat /tmp/scan.txt
[ "$rc" = 0 ] || tb_fail "plain scan exited $rc"
grep -q '^new 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major=1 minor=2 rssi=[^ ]* power=-59 company=0x0118 ' /tmp/scan.txt \
  || tb_fail "plain line missing"
tb_log "plain lines ok"

rc=0; out=$("$B" scan --adapter hci3 --timeout 1 2>&1) || rc=$?
echo "$out"
[ "$rc" = 69 ] || tb_fail "missing adapter: exit $rc, expected 69"
case "$out" in *"no Bluetooth adapter hci3"*) ;; *) tb_fail "missing adapter message does not name hci3" ;; esac

rc=0; out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$B" scan --adapter hci1 --timeout 1 2>&1) || rc=$?
echo "$out"
[ "$rc" = 77 ] || tb_fail "no capabilities: exit $rc, expected 77"
case "$out" in *CAP_NET_RAW*CAP_NET_ADMIN*) ;; *) tb_fail "permission message does not name CAP_NET_RAW and CAP_NET_ADMIN" ;; esac

rc=0; tb_as_nobody "$B" scan --adapter hci1 --json --timeout 2 >/tmp/scan2.json 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat /tmp/scan2.json; tb_fail "scan as nobody with CAP_NET_RAW+CAP_NET_ADMIN exited $rc"; }
grep -q '"minor":2,' /tmp/scan2.json || tb_fail "scan as nobody with capabilities heard nothing"
tb_pass "listed with the right fields (json and plain); hci3 -> 69; no caps -> 77; caps only -> scans"

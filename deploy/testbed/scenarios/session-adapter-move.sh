# flavour: bt5
# session-adapter-move: the beacon moves to another controller by an edit of bluetooth.adapter.
# Three frames (AltBeacon, iBeacon, Eddystone-URL) on three extended sets on hci0; the edit says
# hci2 (a third controller: btvirt restarted with -l3, tbs_btvirt3). Then all three frames must be
# heard from hci2's address, and NOTHING from hci0's address for 4 s after that (both send the
# same bytes: told apart by address). SIGTERM: status 0 and hci2 silent too.
# Figures: each frame heard from hci2 after the edit, hci0's last sighting after the edit.
# timeout: 240
. "$TB_REPO/deploy/testbed/session-lib.sh"
tbs_btvirt3 bt5 || tb_fail "btvirt -l3 did not give hci0, hci1 and hci2"
A0=$(tbs_addr hci0)
A2=$(tbs_addr hci2)
[ -n "$A0" ] && [ -n "$A2" ] && [ "$A0" != "$A2" ] || tb_fail "no distinct addresses for hci0 ($A0) and hci2 ($A2)"
tb_log "three controllers: hci0 $A0, hci1 the observer, hci2 $A2"
FRAMES=("$TB_RIG_HEX" "$TBF_IBEACON" "$TBF_URL")
tbd_config "[ibeacon]" "major = 7" "[eddystone]" 'url = "https://www.example.com/"' "[bluetooth]" 'adapter = "hci0"'
tbd_start
first=$(tbd_wait_frames 10000 "${FRAMES[@]}") || { tbd_dump; tb_fail "not all three frames heard from hci0"; }
for h in "${FRAMES[@]}"; do
  grep -aq " $A0 [-0-9]* $h\$" "$TBD_FRAMES" || { tbd_dump; tb_fail "$(tbs_name "$h") not heard from hci0's address $A0"; }
done
tb_log "all three frames heard from hci0 within ${first} ms (started ${TBD_START_MS} ms)"
tbs_watch_start
_tb_sleep 1
te=$(tb_now_ms)
sed -i 's/^adapter = "hci0"$/adapter = "hci2"/' "$TBD_CONFIG"
tb_log "config edited: adapter hci0 -> hci2"
onto=""
tq=$te
for h in "${FRAMES[@]}"; do
  if t=$(tbs_wait "$A2" "$h" "$te" 10000); then
    onto="$onto $(tbs_name "$h")=$((t - te))ms"
    [ "$t" -gt "$tq" ] && tq=$t
  else
    onto="$onto $(tbs_name "$h")=never"
    tq=$(tb_now_ms)
    tbs_check_failed "$(tbs_name "$h") not heard from hci2 ($A2) within 10 s of the edit"
  fi
done
tb_log "heard from hci2 after the edit:$onto"
# hci0 must be silent from the moment hci2 carries the beacon, for 4 s
tbs_watch_until $((tq + 4000))
left=$(tbs_heard "$A0" "$tq")
last0=$(tbs_last "$A0" '*') && last0="$((last0 - te)) ms after the edit" || last0=none
tb_log "from hci0 in the 4 s after hci2 carried the beacon: ${left:-nothing}; hci0's last sighting: $last0"
[ -z "$left" ] || tbs_check_failed "hci0 ($A0) still on air after the move to hci2: $left in 4 s"
n2=$(tbs_heard "$A2" "$tq")
[ -n "$n2" ] || tbs_check_failed "hci2 not heard again in the 4 s after it carried the beacon"
_tb_alive "$TB_DAEMON_PID" || tbs_check_failed "the daemon exited after the move"
tbs_no_crash
# SIGTERM: hci2 (and hci0) silent afterwards
after2="not checked"
if _tb_alive "$TB_DAEMON_PID"; then
  rc=0
  tb_daemon_stop || rc=$?
  tx=$(tb_now_ms)
  [ "$rc" = 0 ] || tbs_check_failed "daemon exited $rc after SIGTERM"
  tbs_watch_until $((tx + 3000))
  after2=$(tbs_heard "$A2" "$tx")
  after0=$(tbs_heard "$A0" "$tx")
  tb_log "in the 3 s after the exit: hci2 ${after2:-silent}, hci0 ${after0:-silent}"
  [ -z "$after2" ] || tbs_check_failed "hci2 ($A2) still on air after SIGTERM: $after2 in 3 s"
fi
tbs_verdict "adapter move: heard from hci2 after the edit:$onto; from hci0 in the 4 s after: ${left:-nothing} (last sighting $last0); after SIGTERM: hci2 ${after2:-silent}"

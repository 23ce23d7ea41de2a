# flavour: bt5
# session-restart-fewer-frames: a daemon killed with SIGKILL leaves its advertising sets on air in
# the controller; the next daemon, started on a config with fewer frames, must not leave the stale
# sets there. Three frames on three extended sets on hci0; kill -9 (all three still heard: the
# controller keeps them); the config becomes the AltBeacon alone; a new daemon. From its "on air"
# on, only the AltBeacon may be heard (4 s): the stale iBeacon and Eddystone-URL sets are gone.
# Figures: restart to "on air", the stale frames' last sighting after the restart.
# timeout: 240
. "$TB_REPO/deploy/testbed/session-lib.sh"
A0=$(tbs_addr hci0)
FRAMES=("$TB_RIG_HEX" "$TBF_IBEACON" "$TBF_URL")
tbd_config "[ibeacon]" "major = 7" "[eddystone]" 'url = "https://www.example.com/"'
tbd_start
first=$(tbd_wait_frames 10000 "${FRAMES[@]}") || { tbd_dump; tb_fail "not all three frames heard"; }
tb_log "three frames on air within ${first} ms ($(grep -o 'extended, sets[^)]*' /tmp/altbeacond.log | head -1))"
kill -KILL "$TB_DAEMON_PID"
wait "$TB_DAEMON_PID" 2>/dev/null
TB_DAEMON_PID=""
still=$(tbd_wait_frames 5000 "${FRAMES[@]}") || tb_fail "after kill -9 the three frames are not all heard any more (the rig should keep the sets on air)"
tb_log "killed with SIGKILL; all three frames still heard (within ${still} ms)"
tbd_config
: >/tmp/altbeacond.log
tbs_watch_start
_tb_sleep 0.5
t0=$(tb_now_ms)
tb_daemon_start run --config "$TBD_CONFIG"
tbd_wait_log "on air" 15 || { tbd_dump; tb_fail "the restarted daemon did not log 'on air' within 15 s"; }
ton=$(tb_now_ms)
tb_log "restarted with the AltBeacon alone: 'on air' logged after $((ton - t0)) ms"
tbs_watch_until $((ton + 4000))
stale=$(tbs_heard "$A0" "$ton" "$TB_RIG_HEX")
[ -z "$stale" ] || tbs_check_failed "stale frames heard from hci0 in the 4 s after the restart was on air: $stale"
[ -n "$(tbs_heard "$A0" "$ton")" ] || tbs_check_failed "the AltBeacon not heard in the 4 s after the restart was on air"
lasts=""
for h in "$TBF_IBEACON" "$TBF_URL"; do
  if ! t=$(tbs_last "$A0" "$h"); then lasts="$lasts $(tbs_name "$h")=none"
  elif [ "$t" -gt $((ton + 3500)) ]; then lasts="$lasts $(tbs_name "$h")=still-on-air"
  else lasts="$lasts $(tbs_name "$h")=$((t - t0))ms"; fi
done
tb_log "last sightings of the stale frames after the restart:$lasts"
_tb_alive "$TB_DAEMON_PID" || tbs_check_failed "the restarted daemon exited"
tbs_no_crash
if _tb_alive "$TB_DAEMON_PID"; then
  tbs_watch_stop
  rc=0
  tb_daemon_stop || rc=$?
  [ "$rc" = 0 ] || tbs_check_failed "restarted daemon exited $rc after SIGTERM"
fi
tbs_verdict "restart with fewer frames: 'on air' $((ton - t0)) ms after the restart; stale frames' last sighting (ms after the restart):$lasts; from hci0 in the 4 s after 'on air', besides the AltBeacon: ${stale:-nothing}"

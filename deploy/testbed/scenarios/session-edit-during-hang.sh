# session-edit-during-hang: an edit that arrives while the controller is wedged. hci0 wedges
# (tb_fault_wedge: its commands are swallowed), the config is edited (major 1 -> 9) and 3 s pass;
# the wedge ends. Then the NEW identity must be heard within 2 s of the unwedge, and after it only
# the new one: no report of the old major (nor anything else) for 4 s. The daemon stays alive,
# its log shows no crash, and SIGTERM still ends it with status 0 and the beacon off air.
# Figures: edit read (daemon log), new identity heard after the unwedge, last old sighting.
. "$TB_REPO/deploy/testbed/session-lib.sh"
NEW=$(tbs_rig_hex 9 2)
A0=$(tbs_addr hci0)
tbd_config
tbd_start
tb_log "on air ${TBD_START_MS} ms after start (hci0 $A0)"
tbs_watch_start
_tb_sleep 0.5
tb_fault_wedge || tb_fail "cannot wedge hci0"
tw=$(tb_now_ms)
_tb_sleep 0.5
sed -i 's/^major = 1$/major = 9/' "$TBD_CONFIG"
te=$(tb_now_ms)
tb_log "hci0 wedged; config edited (major 1 -> 9) $((te - tw)) ms later; waiting 3 s"
_tb_sleep 3
if tb_wedged; then wedged=yes; else wedged="no (an HCI Reset ended it)"; fi
tb_fault_unwedge
tu=$(tb_now_ms)
tb_log "unwedged ($((tu - tw)) ms after the wedge; the wedge was still on: $wedged)"
seen=$(grep -c "major 9" /tmp/altbeacond.log)
early=""
if t=$(tbs_first "$A0" "$NEW" "$te") && [ "$t" -lt "$tu" ]; then
  early=" (heard while wedged, $((t - te)) ms after the edit)"
fi
if tn=$(tbs_wait "$A0" "$NEW" "$tu" 10000); then
  new=$((tn - tu))
  tb_log "new identity heard ${new} ms after the unwedge$early"
  [ "$new" -le 2000 ] || tbs_check_failed "new identity (major 9) heard ${new} ms after the unwedge, limit 2000 ms"
else
  tn=$(tb_now_ms)
  new=never
  tbs_check_failed "new identity (major 9) not heard within 10 s of the unwedge (heard then: $(tbs_heard '*' "$tu"))"
fi
# 4 s after the new identity (or after giving up on it): only the new one may be heard
tbs_watch_until $((tn + 4000))
after=$(tbs_heard '*' "$tn" "$NEW")
[ -z "$after" ] || tbs_check_failed "heard after the new identity, in 4 s: $after (expected only major 9)"
lastold=$(tbs_last '*' "$TB_RIG_HEX") && lastold="$((lastold - tu)) ms after the unwedge" || lastold=none
[ "$new" = never ] || [ "$(tbs_heard '*' "$tn")" != "" ] || tbs_check_failed "new identity not heard again in the 4 s after it first was"
_tb_alive "$TB_DAEMON_PID" || tbs_check_failed "the daemon exited"
tbs_no_crash
if _tb_alive "$TB_DAEMON_PID"; then
  tbs_watch_stop
  rc=0
  tb_daemon_stop || rc=$?
  [ "$rc" = 0 ] || tbs_check_failed "daemon exited $rc after SIGTERM"
  tb_observe --absent-for 1500 --hex "$NEW" --quiet >/dev/null || tbs_check_failed "major 9 still heard after SIGTERM"
  tbs_no_crash
fi
tbs_verdict "edit during a wedge: 'major 9' logged $seen times while wedged; new identity on air ${new} ms after the unwedge$early (limit 2000); last old sighting: $lastold; in the 4 s after the new one, anything else: ${after:-nothing}"

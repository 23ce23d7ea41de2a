# timeout: 240
# session-move-while-hung: the beacon moves away from a controller that no longer answers. The
# AltBeacon on hci0 (LE-only controllers, btvirt -l3: hci2 is the third); hci0 wedges hard
# (tb_fault_wedge_hard: every command swallowed, HCI Reset too; probes every second); then the
# config says adapter = "hci2". The beacon must be heard from hci2's address within 5 s of the
# edit: the hung old adapter must not delay the new one. (hci0's old advertising stays on the
# emulated radio while it is wedged: told apart by address.) Then SIGTERM with hci0 still wedged:
# exit status 0 within 1 s, hci2 silent afterwards. Two rounds, on fresh controllers each:
#   early: the edit comes 0.5 s after the wedge (a command of the daemon's is swallowed)
#   noticed: the edit comes once the daemon has logged "controller not answering" (its recovery
#            of hci0 under way)
# Figures per round: edit to heard on hci2 (waited for up to 30 s), SIGTERM to exit.
. "$TB_REPO/deploy/testbed/session-lib.sh"
figures=""
RIGCHECK_HEX=0201060909696e747275646572   # flags + name "intruder"

# round NAME NOTICED: one round; NOTICED=yes waits for the daemon to notice the hang before the edit
round() {
  local name=$1 a0 a2 tw te t moved rigcheck term=never noticed="" i rc tx after2 n0=${#TBS_FAILS[@]}
  tbs_btvirt3 le || tb_fail "[$name] btvirt -l3 -L did not give hci0, hci1 and hci2"
  a0=$(tbs_addr hci0)
  a2=$(tbs_addr hci2)
  [ -n "$a0" ] && [ -n "$a2" ] && [ "$a0" != "$a2" ] || tb_fail "[$name] no distinct addresses for hci0 ($a0) and hci2 ($a2)"
  tbd_config "[bluetooth]" 'adapter = "hci0"' "[watchdog]" "check_interval_s = 1"
  : >/tmp/altbeacond.log
  tbd_start
  tb_log "[$name] on air on hci0 ($a0) ${TBD_START_MS} ms after start; hci2 is $a2"
  tb_fault_wedge_hard || tb_fail "[$name] cannot wedge hci0 hard"
  tw=$(tb_now_ms)
  tbs_watch_start
  if [ "$2" = yes ]; then
    if tbd_wait_log "controller not answering" 10; then noticed=", noticed by the daemon after $(($(tb_now_ms) - tw)) ms"
    else noticed=", no 'controller not answering' in the daemon's log within 10 s"; fi
  fi
  _tb_sleep 0.5
  te=$(tb_now_ms)
  sed -i 's/^adapter = "hci0"$/adapter = "hci2"/' "$TBD_CONFIG"
  tb_log "[$name] config edited: adapter hci0 -> hci2, $((te - tw)) ms after the hard wedge$noticed"
  if t=$(tbs_wait "$a2" "$TB_RIG_HEX" "$te" 30000); then
    moved="$((t - te)) ms"
    tb_log "[$name] heard from hci2 $moved after the edit"
    [ $((t - te)) -le 5000 ] || tbs_check_failed "[$name] beacon heard from hci2 $moved after the edit, limit 5000 ms"
  else
    moved="never (30 s)"
    tbs_check_failed "[$name] beacon not heard from hci2 ($a2) within 30 s of the edit"
  fi
  rigcheck=""
  [ "$moved" = "never (30 s)" ] && rigcheck=yes
  tb_wedged || tbs_check_failed "[$name] the hard wedge ended during the test (rig)"
  _tb_alive "$TB_DAEMON_PID" || tbs_check_failed "[$name] the daemon exited after the move"
  tbs_no_crash
  # SIGTERM with hci0 still wedged
  if _tb_alive "$TB_DAEMON_PID"; then
    _tb_sleep 0.5
    t=$(tb_now_ms)
    kill -TERM "$TB_DAEMON_PID"
    for ((i = 0; i < 500; i++)); do _tb_alive "$TB_DAEMON_PID" || break; _tb_sleep 0.01; done
    tx=$(tb_now_ms)
    if _tb_alive "$TB_DAEMON_PID"; then
      tbs_check_failed "[$name] daemon still running 5 s after SIGTERM (hci0 wedged)"
      kill -KILL "$TB_DAEMON_PID"
      wait "$TB_DAEMON_PID"
    else
      term="$((tx - t)) ms"
      wait "$TB_DAEMON_PID"; rc=$?
      tb_log "[$name] SIGTERM: exit status $rc after $term (hci0 still wedged)"
      [ "$rc" = 0 ] || tbs_check_failed "[$name] exit status $rc after SIGTERM"
      [ $((tx - t)) -le 1000 ] || tbs_check_failed "[$name] exit $term after SIGTERM, limit 1000 ms"
    fi
    TB_DAEMON_PID=""
    tbs_watch_until $((tx + 2000))
    after2=$(tbs_heard "$a2" "$tx")
    [ -z "$after2" ] || tbs_check_failed "[$name] hci2 ($a2) still on air after the exit: $after2 in 2 s"
    tbs_no_crash
  fi
  if [ -n "$rigcheck" ]; then   # is it the daemon? hci2 advertising by hand, with other bytes
    t=$(tb_now_ms)
    if tb_studyguide_start hci2 "$RIGCHECK_HEX" >/dev/null && tbs_wait "$a2" "$RIGCHECK_HEX" "$t" 5000 >/dev/null; then
      tb_log "[$name] rig check: hci2 works (the study guide's sequence on it is heard from $a2)"
    else
      tbs_check_failed "[$name] rig: hci2 does not advertise by hand either"
    fi
  fi
  tbs_watch_stop
  [ ${#TBS_FAILS[@]} -eq "$n0" ] || { echo "--- [$name]"; tbd_dump; }
  tb_fault_unwedge
  figures="$figures [$name] heard on hci2 $moved after the edit (limit 5000 ms), SIGTERM to exit $term (limit 1000 ms);"
}

round early no
round noticed yes
TBS_DUMPED=1
tbs_verdict "move away from a hard-wedged hci0:${figures%;}"

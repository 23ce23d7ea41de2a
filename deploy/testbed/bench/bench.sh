# altbeacond benchmark, run inside ONE testbed VM by deploy/bench (docs/benchmarks.md).
# Not a scenario: it prints figures, never checks budgets. Each figure is one line
#     BENCH <key> <value...>
# (times in ms from the observer's CLOCK_MONOTONIC stamps); the host formats the table.
# Environment: TB_BENCH_N (repetitions, default 5), TB_BENCH_QUIET_S (quiet window, default 60).
# Exit status non-zero only if the benchmark could not run at all.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"

N=${TB_BENCH_N:-5}
QUIET_S=${TB_BENCH_QUIET_S:-60}
HEX=$TB_RIG_HEX
LOG=/tmp/altbeacond.log

fig() { echo "BENCH $*"; }
note() { echo "# $*"; }
BENCH_T0=$(tb_now_ms)
section() { note "[+$((($(tb_now_ms) - BENCH_T0) / 1000)) s] $*"; }
# sample_rss: the daemon's resident memory in KiB into RSS_NOW, by a walk of its page tables
# (tb_smaps_kb: not VmRSS, which lags by up to ~1.4 MiB on this kernel), the highest into RSS_PEAK
RSS_NOW=0 RSS_PEAK=0
sample_rss() { RSS_NOW=$(tb_smaps_kb "$TB_DAEMON_PID" Rss); [ "${RSS_NOW:-0}" -le "$RSS_PEAK" ] || RSS_PEAK=$RSS_NOW; }

# stats V...: prints "median min max count" of integer values (median of even count: mean of the two middle)
stats() {
  [ $# -gt 0 ] || { echo "n/a n/a n/a 0"; return; }
  printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%d %d %d %d\n", m, v[1], v[NR], NR }'
}

# logcount PATTERN: lines of the daemon log matching PATTERN
logcount() { grep -c -- "$1" "$LOG" 2>/dev/null || true; }
# wait_logcount PATTERN N TIMEOUT_S: waits until PATTERN occurs at least N times in the log
wait_logcount() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do
    [ "$(logcount "$1")" -ge "$2" ] && return 0
    _tb_sleep 0.05
  done
  return 1
}

# clean_controller: advertising off, hci0 down and up again (the kernel resets it on the way up),
# then checks nothing of ours is on air for 300 ms
clean_controller() {
  _tb_hcicmd hci0 0x08 0x000a 00 >/dev/null
  hciconfig hci0 down; hciconfig hci0 up
  tb_observe --absent-for 300 --timeout 3000 --hex "$HEX" --quiet >/dev/null \
    || note "warning: beacon still heard after the controller reset"
}

# observer_bg: a scanning observer in the background waiting for HEX (pid OBS_PID, output /tmp/obs.out).
# btvirt reports an advertiser to a running scan the moment it enables advertising, so the stamp
# is when the beacon went on air, not when a fresh observer got round to scanning.
observer_bg() {
  tb_observe_bg /tmp/obs.out --until-hex "$1" --timeout "${2:-15000}" --quiet
  OBS_PID=$TB_OBSERVE_PID
  _tb_sleep 0.5   # let it enable scanning
}
# observer_heard START_MS: waits for the background observer; sets HEARD_MS to the ms from
# START_MS to heard (call it directly, not in $(...): the observer is this shell's child)
observer_heard() {
  local t
  HEARD_MS=""
  wait "$OBS_PID" || return 1
  t=$(awk '$1 == "heard" {print $2}' /tmp/obs.out | tail -1)
  [ -n "$t" ] || return 1
  HEARD_MS=$((t - $1))
}

daemon_stop_quiet() { tb_daemon_stop >/dev/null 2>&1 || true; }

# --- 1. process start to first advertisement heard: altbeacond vs the study-guide sequence -------
tbd_config
section "start-to-air: $N runs each, alternating; controller reset (disable, down, up) before each"
a_times=() s_times=()
for ((i = 1; i <= N; i++)); do
  clean_controller
  : >"$LOG"
  observer_bg "$HEX"
  t0=$(tb_now_ms)
  tb_daemon_start run --config "$TBD_CONFIG"
  if observer_heard "$t0"; then a_times+=("$HEARD_MS"); note "altbeacond run $i: $HEARD_MS ms"
  else note "altbeacond run $i: not heard within 15 s"; tbd_dump; fi
  daemon_stop_quiet

  clean_controller
  observer_bg "$HEX"
  t0=$(tb_now_ms)
  tb_studyguide_start hci0 >/dev/null || note "study-guide run $i: a command failed"
  if observer_heard "$t0"; then s_times+=("$HEARD_MS"); note "study-guide run $i: $HEARD_MS ms"
  else note "study-guide run $i: not heard within 15 s"; fi
done
fig start_altbeacond $(stats "${a_times[@]}")
fig start_studyguide $(stats "${s_times[@]}")

# --- 2. the study-guide setup after a controller reset: never back -------------------------------
# (the study-guide beacon from the last run above is still on air)
if tb_wait_heard "$HEX" 5000 >/dev/null; then
  tb_fault_reset
  if tb_wait_heard "$HEX" 5000 >/dev/null; then fig studyguide_reset heard-again; else fig studyguide_reset never; fi
else
  fig studyguide_reset n/a
fi
clean_controller

# --- 3. the daemon for the fault loops: figures before -------------------------------------------
tbd_config "[watchdog]" "check_interval_s = 1"
: >"$LOG"
tbd_start
_tb_sleep 1
sample_rss
fd_before=$(tbd_fd_count) rss_before=$RSS_NOW

# longest_turn: the longest time (ms) the daemon's loop was busy in one turn since the last call
# (SIGUSR1 makes it log that and start over); "n/a" if it did not answer within 2 s
longest_turn() {
  local before i
  before=$(logcount "loop: longest busy turn")
  kill -USR1 "$TB_DAEMON_PID"
  for ((i = 0; i < 40; i++)); do
    [ "$(logcount "loop: longest busy turn")" -gt "$before" ] && break
    _tb_sleep 0.05
  done
  grep "loop: longest busy turn" "$LOG" | tail -1 | sed -n 's/.*longest busy turn \([0-9.]*\) ms.*/\1/p' | grep . || echo n/a
}
longest_turn >/dev/null   # starts the measurement now

# fault_loop NAME PATTERN INJECT [PREPARE WAITPAT]: N times: PREPARE (if any), wait for the
# (k-th) WAITPAT, then REF = now, INJECT, wait for the k-th "back on air after PATTERN" and the
# beacon heard after it; time = heard - REF. Mirrors watchdog-*.sh.
fault_loop() {
  local name=$1 pat="back on air after $2" inject=$3 prep=${4:-} waitpat=${5:-} k base wbase t heard times=()
  base=$(logcount "$pat") wbase=$(logcount "${waitpat:-^$}")
  for ((k = 1; k <= N; k++)); do
    tbd_alive
    if [ -n "$prep" ]; then
      $prep >/dev/null 2>&1
      if ! wait_logcount "$waitpat" $((wbase + k)) 15; then note "$name $k: '$waitpat' not logged"; $inject >/dev/null 2>&1; continue; fi
      _tb_sleep 0.3
    fi
    t=$(tb_now_ms)
    $inject >/dev/null 2>&1
    if ! wait_logcount "$pat" $((base + k)) 15; then note "$name $k: no '$pat' in the log"; continue; fi
    if heard=$(tb_wait_heard "$HEX" 5000); then times+=($((heard - t))); note "$name $k: $((heard - t)) ms"
    else note "$name $k: not heard within 5 s after '$pat'"; fi
    sample_rss
  done
  fig "fault_$name" $(stats "${times[@]}")
  fig "rss_after_$name" "$RSS_NOW"
  fig "busy_$name" "$(longest_turn)"
  note "$name: logged $(grep -- "$pat" "$LOG" | tail -1 | sed 's/.*\(back on air after [^(]*\).*/\1/'); resident now $RSS_NOW KiB, $(tbd_fd_count) fds"
}
section "faults: $N of each against one altbeacond (check_interval_s = 1)"
# hciconfig reset is a down + up: the daemon may log either cause
fault_loop reset '\(reset\|down\)' tb_fault_reset
fault_loop down down tb_fault_down
fault_loop disabled disabled tb_fault_adv_disable
fault_loop overwritten overwritten tb_fault_adv_overwrite
fault_loop rfkill rfkill tb_fault_rfkill_unblock tb_fault_rfkill_block "blocked by rfkill"
fault_loop removed removed tb_fault_return tb_fault_remove "adapter missing"
fault_loop hung hung tb_fault_unhang tb_fault_hang "controller not answering"
tbd_alive
_tb_sleep 1
sample_rss
fd_after=$(tbd_fd_count) rss_after=$RSS_NOW
fig leak_fd "$fd_before" "$fd_after"
fig leak_rss_kb "$rss_before" "$rss_after"
# the peak: the highest page-table count sampled after each fault, and the kernel's VmHWM (from the
# lagging counters: it can miss a peak, and shows a late step)
fig faults_peak_kb "$RSS_PEAK" "$(awk '/^VmHWM:/ {print $2}' /proc/$TB_DAEMON_PID/status)"

section "edit-to-air"
# --- 4. edit-to-air: sed -i a new major, time until the new payload is heard ---------------------
e_times=()
for ((k = 1; k <= N; k++)); do
  major=$((100 + k))
  newhex=$(printf '0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa6%04x0002c500' "$major")
  t=$(tb_now_ms)
  sed -i "s/^major = .*/major = $major/" "$TBD_CONFIG"
  if ms=$(tb_wait_heard "$newhex" 5000 "$t"); then e_times+=("$ms"); note "edit $k: $ms ms"
  else note "edit $k: major $major not heard within 5 s"; fi
done
fig edit $(stats "${e_times[@]}")
daemon_stop_quiet

# --- 5. steady state: memory, CPU and wakeups over a quiet window (no observer) ------------------
# steady_state PREFIX HEX CONFIG-LINES...: the daemon on that config, figures named PREFIX...
steady_state() {
  local prefix=$1 hex=$2 pid threads c0 u0 n0 q0 c1 u1 n1 q1
  shift 2
  clean_controller
  tbd_config "$@"
  : >"$LOG"
  tbd_start "$hex"
  _tb_sleep 2
  pid=$TB_DAEMON_PID
  # cpuns: time on CPU in ns (first field of /proc/PID/task/*/schedstat, summed over threads);
  # finer than utime+stime, which count whole clock ticks
  cpuns() { local f s=0 a r; for f in /proc/"$pid"/task/*/schedstat; do read -r a r <"$f"; s=$((s + a)); done; echo "$s"; }
  # cputicks: utime + stime of the process (all threads), in clock ticks
  cputicks() { tb_cpu_ticks "$pid"; }
  hz=$(getconf CLK_TCK)
  threads=$(ls "/proc/$pid/task" | wc -l)
  c0=$(tbd_ctxsw "$pid") u0=$(cputicks) n0=$(cpuns) q0=$(tb_now_ms)
  _tb_sleep "$QUIET_S"
  c1=$(tbd_ctxsw "$pid") u1=$(cputicks) n1=$(cpuns) q1=$(tb_now_ms)
  fig "${prefix}quiet_window_ms" $((q1 - q0))
  fig "${prefix}wakeups" "$((c1 - c0))" "$((q1 - q0))"
  fig "${prefix}cpu_quiet_ms" $(((u1 - u0) * 1000 / hz))
  fig "${prefix}cpu_quiet_us" $(((n1 - n0) / 1000))
  fig "${prefix}cpu_total_us" $((n1 / 1000))
  fig "${prefix}cpu_total_ms" $((u1 * 1000 / hz))
  fig "${prefix}threads" "$threads"
  fig "${prefix}rss_kb" "$(tb_smaps_kb "$pid" Rss)" "$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status)"
  fig "${prefix}hwm_kb" "$(awk '/^VmHWM:/ {print $2}' /proc/$pid/status)"
  # what of it is anonymous (heap, stacks: what the code allocates), the rest the binary's pages
  fig "${prefix}anon_kb" "$(tb_smaps_kb "$pid" Anonymous)"
  tb_wait_heard "$hex" 5000 >/dev/null && fig "${prefix}quiet_still_on_air" yes || fig "${prefix}quiet_still_on_air" no
  daemon_stop_quiet
}
section "steady state, quiet ${QUIET_S} s"
steady_state "" "$HEX"
# the same with all five frames of SPEC §3 taking turns on this legacy-only controller (1 s each)
section "steady state, all frames, quiet ${QUIET_S} s"
. "$TB_REPO/deploy/testbed/frames-lib.sh"
steady_state frames_ "$HEX" "[ibeacon]" "major = 7" "[eddystone]" 'namespace = "EDD1EBEAC04E5DEFA017"' \
  'instance = "0123456789ab"' 'url = "https://www.example.com/"' "tlm = true"
# --- 6. another program scans the beacon's adapter (issue 30): the daemon's wakeups ----------------
# hci1 switches its advertising on and off as fast as it can (advgen --rate 500): every scanner
# gets a report each time; hci0, the beacon's adapter, scans once (no re-arming: commands to
# hci0 are what the daemon's monitor rightly sees). Its log stays out of the config's directory.
section "another program scanning the beacon's adapter, ${QUIET_S} s"
clean_controller
tbd_config
: >"$LOG"
tbd_start "$HEX"
_tb_sleep 2
"$TB_TOOLS/advgen" -i hci1 --rate 500 --seconds $((QUIET_S + 6)) >/run/bench-advgen.log 2>&1 &
advgen=$!
TB_OBSERVER=hci0 tb_observe_bg /run/bench-neighbour.log --poll 0 --scan legacy --timeout $(((QUIET_S + 4) * 1000))
scan=$TB_OBSERVE_PID
_tb_sleep 2
r0=$(wc -l </run/bench-neighbour.log) c0=$(tbd_ctxsw) q0=$(tb_now_ms)
_tb_sleep "$QUIET_S"
r1=$(wc -l </run/bench-neighbour.log) c1=$(tbd_ctxsw) q1=$(tb_now_ms)
kill "$scan" "$advgen" 2>/dev/null
wait "$scan" "$advgen" 2>/dev/null
fig neighbour_reports "$((r1 - r0))" "$((q1 - q0))"
fig neighbour_wakeups "$((c1 - c0))" "$((q1 - q0))"
tb_wait_heard "$HEX" 5000 >/dev/null && fig neighbour_still_on_air yes || fig neighbour_still_on_air no
daemon_stop_quiet
fig guest_binary_bytes "$(stat -c %s "$ALTBEACOND_BIN")"
section "done"
fig done 1
exit 0

# shellcheck shell=bash
# Helpers for the session scenarios (scenarios/session-*.sh), on top of daemon-lib.sh and
# frames-lib.sh: a third controller to move the beacon to, an observer streaming to a file in the
# background, sightings read off that file by address and time, and checks that are collected so
# that a scenario reports every broken promise, not only the first.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/frames-lib.sh"

TBS_WATCH=/tmp/watch.log
TBS_FAILS=()

# tbs_btvirt3 [le|bt5]: restarts btvirt with three controllers in ONE process (-l3; -L too for
# le), tools/wedge.so preloaded as tb_btvirt_start does: hci0 (the beacon's), hci1 (the
# observer's) and hci2 (where the beacon moves to). One process, because btvirt's radio is its
# own list of emulated controllers: a second btvirt instance's hci2 would not be heard on hci1.
# Status 1 if the three do not appear within 10 s. (tb_fault_return would restart with two.)
tbs_btvirt3() {
  local flavour=${1:-${TB_FLAVOUR:-le}} args
  case "$flavour" in
    le) args=(-l3 -L) ;;
    bt5) args=(-l3) ;;
    *) echo "tbs_btvirt3: unknown flavour $flavour" >&2; return 2 ;;
  esac
  local i
  tb_btvirt_stop || return 1
  # (tb_btvirt_stop waits for hci0 and hci1 only: a lingering hci2 would push the new ones up)
  for ((i = 0; i < 100; i++)); do [ -e /sys/class/bluetooth/hci2 ] || break; _tb_sleep 0.05; done
  mkdir -p "$TB_STATE"
  echo "$flavour" >"$TB_STATE/btvirt.flavour"
  rm -f "$TB_WEDGE" "$TB_WEDGE_HARD"
  LD_PRELOAD=$TB_TOOLS/wedge.so setsid btvirt "${args[@]}" >>"$TB_STATE/btvirt.log" 2>&1 </dev/null &
  echo $! >"$TB_STATE/btvirt.pid"
  tb_wait_hci hci0 10 && tb_wait_hci hci1 10 && tb_wait_hci hci2 10
}
# tbs_addr hciN: the controller's BD address as the observer prints it (00:AA:01:02:00:02)
tbs_addr() { hciconfig "$1" | awk '/BD Address:/ {print $3; exit}'; }

# tbs_rig_hex MAJOR MINOR: the rig AltBeacon (TB_RIG_HEX) with another major/minor
tbs_rig_hex() { printf '0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa6%04x%04xc500' "$1" "$2"; }
# tbs_name HEX: a short name for a frame's bytes (altbeacon, altbeacon-major-N, ibeacon, ...)
tbs_name() {
  case "$1" in
    "$TB_RIG_HEX") echo altbeacon ;;
    0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa6*) echo "altbeacon-major-$((16#${1:50:4}))" ;;
    "$TBF_IBEACON") echo ibeacon ;;
    0201061aff4c000215*) echo "ibeacon-major-$((16#${1:50:4}))" ;;
    "$TBF_URL") echo eddystone-url ;;
    "$TBF_UID") echo eddystone-uid ;;
    0201060303aafe1116aafe20*) echo eddystone-tlm ;;
    *) echo "$1" ;;
  esac
}

# --- the background observer ---------------------------------------------------------------------
# It is the only observer while it runs (each observer re-arms hci1's scanning): no tbd_start,
# tb_wait_heard or tbd_wait_frames meanwhile.

# tbs_watch_start: streams every report hci1 hears ("<ms> <addr> <rssi> <hex>") into $TBS_WATCH
# (emptied first) until tbs_watch_stop (or 150 s); sets TBS_WATCH_PID. Call it directly.
tbs_watch_start() {
  tb_observe_bg "$TBS_WATCH" --timeout 150000
  TBS_WATCH_PID=$TB_OBSERVE_PID
}
# tbs_watch_stop: ends the background observer
tbs_watch_stop() {
  [ -n "${TBS_WATCH_PID:-}" ] || return 0
  kill "$TBS_WATCH_PID" 2>/dev/null
  wait "$TBS_WATCH_PID" 2>/dev/null
  TBS_WATCH_PID=""
}
# tbs_watch_until MS: returns once the monotonic clock is past MS (plus 200 ms for the last poll
# to be written): the watch file then covers everything heard up to MS
tbs_watch_until() {
  local left=$(($1 + 200 - $(tb_now_ms)))
  [ "$left" -gt 0 ] && _tb_sleep "$((left / 1000)).$(printf '%03d' $((left % 1000)))"
  return 0
}
# tbs_first ADDR HEX SINCE_MS: prints the ms of the first report at or after SINCE_MS from ADDR
# ("*": any) with data HEX ("*": any); status 1 if there is none (yet)
tbs_first() {
  awk -v a="$1" -v h="$2" -v s="$3" \
    '$1 >= s && (a == "*" || $2 == a) && (h == "*" || $4 == h) {print $1; f = 1; exit} END {exit !f}' "$TBS_WATCH"
}
# tbs_last ADDR HEX: prints the ms of the last report from ADDR ("*": any) with data HEX ("*": any);
# status 1 if there is none
tbs_last() {
  awk -v a="$1" -v h="$2" '(a == "*" || $2 == a) && (h == "*" || $4 == h) {t = $1; f = 1} END {if (f) print t; exit !f}' "$TBS_WATCH"
}
# tbs_wait ADDR HEX SINCE_MS TIMEOUT_MS: waits until tbs_first ADDR HEX SINCE_MS finds a report
# (it must come before SINCE_MS + TIMEOUT_MS); prints its ms; status 1 on timeout
tbs_wait() {
  local t
  while :; do
    if t=$(tbs_first "$1" "$2" "$3"); then
      [ "$t" -le $(($3 + $4)) ] && { echo "$t"; return 0; }
      return 1
    fi
    [ "$(tb_now_ms)" -le $(($3 + $4 + 300)) ] || return 1
    _tb_sleep 0.1
  done
}
# tbs_heard ADDR AFTER_MS [EXCEPT_HEX]: what was heard from ADDR ("*": any) strictly after AFTER_MS,
# other than EXCEPT_HEX: one "N×name" per kind of data, space separated; empty if nothing
tbs_heard() {
  local n hex out="" counts   # (no process substitution: the guest has no /dev/fd)
  counts=$(awk -v a="$1" -v s="$2" -v x="${3:-}" \
    '$1 > s && (a == "*" || $2 == a) && $4 != x {c[$4]++} END {for (h in c) print c[h], h}' "$TBS_WATCH")
  while read -r n hex; do
    [ -n "$hex" ] && out="$out ${n}×$(tbs_name "$hex")"
  done <<<"$counts"
  echo "${out# }"
}

# --- checks and the verdict ------------------------------------------------------------------------

# tbs_check_failed MSG: records a failed check (printed now, the first one becomes the FAIL line)
tbs_check_failed() { echo "check failed: $*"; TBS_FAILS+=("$*"); }
# tbs_no_crash: records a failed check if the daemon's log shows a crash or a fatal error
tbs_no_crash() {
  local l
  l=$(grep -aEi -m1 'fatal error|crash|stack trace|backtrace|segmentation fault|illegal instruction|assertion failed|precondition failed|unexpectedly found nil' /tmp/altbeacond.log) \
    && tbs_check_failed "the daemon's log shows a crash: $l"
  return 0
}
# tbs_verdict MSG: tb_pass MSG if no check failed, else the daemon's log (unless TBS_DUMPED is set:
# the scenario printed it already) and tb_fail with every failed check (the first one first)
tbs_verdict() {
  tbs_watch_stop
  if [ ${#TBS_FAILS[@]} -eq 0 ]; then tb_pass "$*"; fi
  [ -n "${TBS_DUMPED:-}" ] || tbd_dump
  local msg=${TBS_FAILS[0]} i
  for ((i = 1; i < ${#TBS_FAILS[@]}; i++)); do msg="$msg; ${TBS_FAILS[i]}"; done
  echo "figures: $*"
  tb_fail "$msg"
}

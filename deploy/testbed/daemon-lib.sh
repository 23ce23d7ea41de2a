# shellcheck shell=bash
# Helpers for scenarios that run altbeacond itself (on top of lib.sh): a config, the daemon
# started and heard, a streaming observer, and recovery times read off what hci1 heard.
. "$TB_REPO/deploy/testbed/lib.sh"

TBD_CONFIG=/tmp/c.toml
TBD_OBS=/tmp/obs.log

# tbd_config [TOML LINES...]: writes the rig beacon (SPEC §3) to $TBD_CONFIG; extra lines
# (e.g. "[bluetooth]" "interval_ms = 20", or a [leds] table) are appended as given
tbd_config() {
  {
    printf '[beacon]\nuuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"\nmajor = 1\nminor = 2\n'
    for l in "$@"; do printf '%s\n' "$l"; done
  } >"$TBD_CONFIG"
}
# tbd_leds: the [leds] lines for a status LED on GPIO17 and a fault LED on GPIO27
tbd_leds() { printf '%s\n' "[leds]" 'chip = "pinctrl-bcm2711"' 'status = "GPIO17"' 'fault = "GPIO27"'; }

# tbd_start [HEX]: starts the daemon on $TBD_CONFIG and waits until HEX (default the rig beacon)
# is heard; sets TBD_START_MS to the ms from process start to first heard. (Call it directly, not
# in $(...): the daemon's pid must stay in this shell.)
tbd_start() {
  local hex=${1:-$TB_RIG_HEX} t0
  t0=$(tb_now_ms)
  tb_daemon_start run --config "$TBD_CONFIG"
  TBD_START_MS=$(tb_wait_heard "$hex" 15000 "$t0") || { tbd_dump; tb_fail "beacon not heard within 15 s of start"; }
}
# tbd_dump: prints the daemon's log (on failures)
tbd_dump() { echo "--- altbeacond log:"; cat /tmp/altbeacond.log; }
# tbd_finish: stops the daemon, checks it exited 0 and took the beacon off air
tbd_finish() {
  local rc=0
  tb_daemon_stop || rc=$?
  [ "$rc" = 0 ] || { tbd_dump; tb_fail "daemon exited $rc after SIGTERM"; }
}

# tbd_recovered REF_MS PATTERN [TIMEOUT_S]: waits for the daemon's re-arm log line PATTERN, then
# for the beacon heard on hci1 after it; sets TBD_BACK to the ms from REF_MS to heard again (an
# upper bound: the log is polled every 50 ms and the observer starts afresh); fails the scenario
# if either does not happen
tbd_recovered() {
  local ref=$1 pat=$2 heard
  tbd_wait_log "$pat" "${3:-15}" || { tbd_dump; tb_fail "no '$pat' in the daemon log"; }
  heard=$(tb_wait_heard "$TB_RIG_HEX" 5000) || { tbd_dump; tb_fail "beacon not heard after '$pat'"; }
  TBD_BACK=$((heard - ref))
}

# tbd_wait_log PATTERN TIMEOUT_S: waits until the daemon log has a line matching PATTERN
tbd_wait_log() {
  local i
  for i in $(seq $(($2 * 20))); do grep -q "$1" /tmp/altbeacond.log && return 0; sleep 0.05; done
  return 1
}
# tbd_fd_count: open descriptors of the daemon
tbd_fd_count() { ls "/proc/$TB_DAEMON_PID/fd" | wc -l; }
# tbd_rss_kb: resident memory of the daemon in KiB
tbd_rss_kb() { tb_smaps_kb "$TB_DAEMON_PID" Rss; }
# tbd_anon_kb: its anonymous resident memory (heap, stacks) in KiB: what a leak grows. Rss also
# counts the static binary's code pages, which grow as new code paths run for the first time.
tbd_anon_kb() { tb_smaps_kb "$TB_DAEMON_PID" Anonymous; }
# tbd_ctxsw [PID]: voluntary + nonvoluntary context switches summed over the daemon's threads
# (its wakeups)
tbd_ctxsw() {
  local f s=0 k v
  for f in /proc/"${1:-$TB_DAEMON_PID}"/task/*/status; do
    while read -r k v; do
      case "$k" in voluntary_ctxt_switches:|nonvoluntary_ctxt_switches:) s=$((s + v)) ;; esac
    done <"$f"
  done
  echo "$s"
}
# tbd_alive: fails the scenario if the daemon has exited
tbd_alive() { _tb_alive "$TB_DAEMON_PID" || { tbd_dump; tb_fail "altbeacond exited"; }; }
# tbd_assert_off_air [MS]: fails (with the daemon's log) if the rig beacon is heard within MS (1500)
tbd_assert_off_air() {
  tb_observe --absent-for "${1:-1500}" --hex "$TB_RIG_HEX" --quiet >/dev/null \
    || { tbd_dump; tb_fail "beacon still heard after the daemon stopped"; }
}

# tbd_wait_frames TIMEOUT_MS PATTERN...: waits until every PATTERN (advertising data as hex; a
# trailing * matches any rest, for the TLM frame whose counters change) has been heard on hci1;
# prints the ms that took. Every report heard stays in $TBD_FRAMES. Status 1 on timeout, with the
# patterns not heard on stderr.
TBD_FRAMES=/tmp/frames.log
tbd_wait_frames() {
  local timeout=$1 t0 pid p missing=()
  shift
  t0=$(tb_now_ms)
  tb_observe_bg "$TBD_FRAMES" --timeout "$timeout"
  pid=$TB_OBSERVE_PID
  while :; do
    missing=()
    for p in "$@"; do
      if [[ $p == *'*' ]]; then
        grep -aq " ${p%\*}[0-9a-f]*\$" "$TBD_FRAMES" || missing+=("$p")
      else
        grep -aq " $p\$" "$TBD_FRAMES" || missing+=("$p")
      fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
      kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
      echo $(($(tb_now_ms) - t0))
      return 0
    fi
    _tb_alive "$pid" || { wait "$pid" 2>/dev/null; echo "not heard within ${timeout} ms: ${missing[*]}" >&2; return 1; }
    _tb_sleep 0.1
  done
}
# tbd_tlm_field FIELD: from the last TLM frame in $TBD_FRAMES, prints battery, temp (hex), count
# or uptime (decimal for the last two)
tbd_tlm_field() {
  local hex
  hex=$(grep -ao ' 0201060303aafe1116aafe2000[0-9a-f]*$' "$TBD_FRAMES" | tail -1 | tr -d ' ')
  [ ${#hex} -eq 50 ] || return 1
  case "$1" in
    battery) echo "${hex:26:4}" ;;
    temp) echo "${hex:30:4}" ;;
    count) echo $((16#${hex:34:8})) ;;
    uptime) echo $((16#${hex:42:8})) ;;
  esac
}

# tbd_local_is NODE PYTHON-CONDITION TIMEOUT_S: until the monitor's retained altbeacond/NODE/beacon
# satisfies the condition (d: its JSON); the scenario's `retained TOPIC` reads it (with the
# scenario's broker credentials). On timeout: the topic, the monitor's and the daemon's logs.
tbd_local_is() {
  local i
  for ((i = 0; i < $3 * 4; i++)); do
    python3 -c "import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if ($2) else 1)" "$(retained "altbeacond/$1/beacon")" 2>/dev/null && return 0
    _tb_sleep 0.25
  done
  echo "--- altbeacond/$1/beacon: $(retained "altbeacond/$1/beacon")"; cat /tmp/monitor.log; tbd_dump
  return 1
}

# tbd_broker [CONF LINES...]: Debian's mosquitto on 127.0.0.1:1883 (loopback brought up) wanting
# the user mon with the password s3cret (also in /tmp/mqtt-password, 0600, for a monitor's
# password_file), extra mosquitto.conf lines as given; returns once it answers; defines
# `retained TOPIC` (the retained message, 3 s at most) and `pub TOPIC PAYLOAD`
tbd_broker() {
  local i l
  ip link set lo up
  { printf 'listener 1883 127.0.0.1\nallow_anonymous false\npassword_file /tmp/mosquitto.passwd\n'
    for l in "$@"; do printf '%s\n' "$l"; done; } >/tmp/mosquitto.conf
  : >/tmp/mosquitto.passwd
  mosquitto_passwd -b /tmp/mosquitto.passwd mon s3cret || tb_fail "mosquitto_passwd"
  printf 's3cret\n' >/tmp/mqtt-password; chmod 0600 /tmp/mqtt-password
  mosquitto -c /tmp/mosquitto.conf >/tmp/mosquitto.log 2>&1 &
  for ((i = 0; i < 50; i++)); do mosquitto_sub -u mon -P s3cret -t x -W 1 -C 1 >/dev/null 2>&1; [ $? != 27 ] || break; _tb_sleep 0.1; done
}
retained() { mosquitto_sub -u mon -P s3cret -t "$1" -C 1 -W 3 2>/dev/null; }
pub() { mosquitto_pub -u mon -P s3cret -t "$1" -m "$2"; }

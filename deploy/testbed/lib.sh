# shellcheck shell=bash
# altbeacond testbed helpers, sourced by scenarios (deploy/testbed/scenarios/*.sh) inside the
# guest. Stage 2 (guest/stage2.sh) has already loaded the modules, made the gpio-sim chip and
# started btvirt; these helpers observe the air and the LEDs and inject the faults of SPEC §5.
# Environment from the host: TB_REPO, ALTBEACOND_BIN, TB_FLAVOUR, TB_SCENARIO, TB_TOOLS,
# TB_KROOT, TB_KVER; from stage 2: TB_GPIOCHIP (/dev/gpiochipN), TB_GPIO_SYSFS, TB_STATE.
# Convention: hci0 is the beacon's controller, hci1 the observer's; both share one radio.

TB_STATE=${TB_STATE:-/run/altbeacond-testbed}
TB_GPIO_LABEL=pinctrl-bcm2711
# the wedge files read by tools/wedge.so in btvirt (tb_fault_wedge, tb_fault_wedge_hard)
TB_WEDGE=/run/tb-wedge
TB_WEDGE_HARD=/run/tb-wedge-hard
# the AltBeacon of SPEC §3 (uuid 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6, major 1, minor 2, -59 dBm)
TB_RIG_HEX=0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500

# --- verdicts and logs --------------------------------------------------------------------------

# tb_log MSG...: prints "# [<monotonic ms>] MSG" on the scenario output
tb_log() { echo "# [$(tb_now_ms)] $*"; }
# tb_pass [MSG]: prints PASS and ends the scenario with status 0
tb_pass() { echo "PASS${1:+: $*}"; exit 0; }
# tb_fail MSG: prints FAIL: MSG and ends the scenario with status 1
tb_fail() { echo "FAIL: $*"; exit 1; }
# tb_smaps_kb PID FIELD: a field of /proc/PID/smaps_rollup in KiB ("Rss", "Anonymous"), counted
# by walking the page tables. Not /proc/PID/status: before Linux 6.2 its VmRSS, RssAnon and
# RssFile come from per-task counters folded into the process's only every 64 page faults, so a
# daemon that went quiet after starting shows up to ~1.4 MiB too little, and a "step" later
# (docs/benchmarks.md, "True resident memory").
# (bash builtins only: an exec costs 30-300 ms in the guest, and the bench reads it after each fault)
tb_smaps_kb() { local k v r; while read -r k v r; do [ "$k" = "$2:" ] && { echo "$v"; return; }; done <"/proc/$1/smaps_rollup"; }
# tb_cpu_ticks PID: the process's utime + stime (all threads) in clock ticks; builtins only, and
# right for a command name with spaces (the fields after its closing parenthesis)
tb_cpu_ticks() { local s; read -r s <"/proc/$1/stat"; s=${s##*) }; set -- $s; echo $((${12} + ${13})); }
# tb_now_ms: CLOCK_MONOTONIC in ms, the clock the observer stamps reports with
tb_now_ms() { "$TB_TOOLS/monoms"; }
# _tb_sleep SECONDS: sleeps without an exec (read -t on a private fifo); execs are slow in the guest
_tb_sleep() {
  if [ -z "${_TB_SLEEP_FD:-}" ]; then
    local f="$TB_STATE/sleep.$$.$BASHPID"
    mkdir -p "$TB_STATE" && mkfifo "$f" && exec {_TB_SLEEP_FD}<>"$f" && rm -f "$f"
  fi
  read -r -t "$1" -u "$_TB_SLEEP_FD" _ || true
}
# _tb_alive PID: status 0 if PID runs (a zombie does not count)
_tb_alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
# tb_as_nobody CMD...: runs CMD as nobody:nogroup with only CAP_NET_RAW + CAP_NET_ADMIN (ambient)
tb_as_nobody() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+net_raw,+net_admin \
    --ambient-caps=+net_raw,+net_admin -- "$@"
}
# tb_gpio_grant: lets group nogroup (tb_as_nobody) use the GPIO chip (chgrp + chmod 660)
tb_gpio_grant() { chgrp nogroup "$TB_GPIOCHIP" && chmod 660 "$TB_GPIOCHIP"; }

# --- the emulated controllers (btvirt) ----------------------------------------------------------

# tb_btvirt_start [le|bt5]: starts btvirt (le: -l2 -L, LE-only; bt5: -l2, BT 5.0 with extended
# advertising) and waits for hci0 and hci1; status 1 if they do not appear within 10 s.
# btvirt always runs with tools/wedge.so preloaded (tb_fault_wedge); new controllers are not
# wedged: the wedge files of an earlier btvirt are removed.
tb_btvirt_start() {
  local flavour=${1:-${TB_FLAVOUR:-le}} args preload=""
  case "$flavour" in
    le) args=(-l2 -L) ;;
    bt5) args=(-l2) ;;
    *) echo "tb_btvirt_start: unknown flavour $flavour" >&2; return 2 ;;
  esac
  if tb_btvirt_pid >/dev/null; then echo "tb_btvirt_start: btvirt already running" >&2; return 1; fi
  mkdir -p "$TB_STATE"
  echo "$flavour" >"$TB_STATE/btvirt.flavour"
  if [ -e "$TB_WEDGE" ] || [ -e "$TB_WEDGE_HARD" ]; then rm -f "$TB_WEDGE" "$TB_WEDGE_HARD"; fi
  if [ -f "$TB_TOOLS/wedge.so" ]; then preload=$TB_TOOLS/wedge.so
  else echo "tb_btvirt_start: no $TB_TOOLS/wedge.so (run prepare): no tb_fault_wedge" >&2; fi
  LD_PRELOAD=$preload setsid btvirt "${args[@]}" >>"$TB_STATE/btvirt.log" 2>&1 </dev/null &
  echo $! >"$TB_STATE/btvirt.pid"
  tb_wait_hci hci0 10 && tb_wait_hci hci1 10
}
# tb_btvirt_stop: kills btvirt (SIGTERM, then SIGKILL) and waits until hci0 and hci1 are gone
tb_btvirt_stop() {
  local pid i
  pid=$(tb_btvirt_pid) || return 0
  kill -CONT "$pid" 2>/dev/null
  kill "$pid" 2>/dev/null
  for ((i = 0; i < 100; i++)); do _tb_alive "$pid" || break; _tb_sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null
  rm -f "$TB_STATE/btvirt.pid"
  for ((i = 0; i < 100; i++)); do
    [ -e /sys/class/bluetooth/hci0 ] || [ -e /sys/class/bluetooth/hci1 ] || return 0
    _tb_sleep 0.05
  done
  echo "tb_btvirt_stop: controllers still present" >&2
  return 1
}
# tb_btvirt_pid: prints the pid of the running btvirt; status 1 if none
tb_btvirt_pid() {
  local pid
  pid=$(cat "$TB_STATE/btvirt.pid" 2>/dev/null) && [ -n "$pid" ] && _tb_alive "$pid" \
    && grep -qx btvirt "/proc/$pid/comm" 2>/dev/null && echo "$pid"
}
# tb_wait_hci hciN [timeout_s]: waits until hciN exists and answers (default 10 s); status 1 if not
tb_wait_hci() {
  local dev=$1 timeout=${2:-10} i
  for ((i = 0; i <= timeout * 20; i++)); do   # at least timeout s: each round sleeps 50 ms
    if [ -e "/sys/class/bluetooth/$dev" ] && hciconfig "$dev" >/dev/null 2>&1; then return 0; fi
    _tb_sleep 0.05
  done
  echo "tb_wait_hci: $dev did not appear within ${timeout}s" >&2
  return 1
}

# --- the observer (hci1) ------------------------------------------------------------------------

# tb_observe ARGS...: runs the observer tool on hci1 (see tools/observe.c: --hex, --until-hex,
# --count, --timeout, --absent-for, --poll, --scan, --no-setup, --quiet); streams
# "<ms> <addr> <rssi> <hex>" lines. One observer at a time: each one re-arms hci1's scanning.
tb_observe() { "$TB_TOOLS/observe" -i "${TB_OBSERVER:-hci1}" "$@"; }
# tb_observe_bg OUT ARGS...: the observer in the background, its stdout in OUT (emptied first), its pid
# in TB_OBSERVE_PID (call it directly, not in $(...)). Not `tb_observe ... &`: $! would then be
# the subshell running the function, and killing that leaves the observer itself scanning,
# re-arming hci1 every 100 ms, until its --timeout (or for ever) beside every later observer.
tb_observe_bg() {
  local out=$1
  shift
  : >"$out"   # here, not in the background: the caller may read OUT at once
  "$TB_TOOLS/observe" -i "${TB_OBSERVER:-hci1}" "$@" >>"$out" 2>/dev/null &
  TB_OBSERVE_PID=$!
}
# tb_rearmed CMD...: runs CMD (an `altbeacond scan`) with an observer beside it re-arming hci1's
# scanning every 100 ms: btvirt reports an advertiser to a scan only when scanning is enabled, so
# CMD's own scan hears every frame in turn, not one report each. CMD's status. (CMD's scan start
# then meets another program's scan, as it may on a real adapter.)
tb_rearmed() {
  local rc=0 pid
  tb_observe_bg /dev/null --timeout 600000
  pid=$TB_OBSERVE_PID
  "$@" || rc=$?
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return $rc
}
# tb_wait_heard HEX TIMEOUT_MS [START_MS]: waits until advertising data HEX is heard on hci1
# (rides out hci1 vanishing, e.g. across tb_fault_remove/return); prints the ms elapsed since
# START_MS, or the monotonic ms when heard if no START_MS; status 1 on timeout
tb_wait_heard() {
  local hex=$1 timeout=$2 start=${3:-} out t end left r
  end=$(($(tb_now_ms) + timeout))
  while :; do
    left=$((end - $(tb_now_ms)))
    [ "$left" -gt 0 ] || return 1
    r=0
    out=$(tb_observe --until-hex "$hex" --timeout "$left" --quiet 2>/dev/null) || r=$?
    [ "$r" = 2 ] && { _tb_sleep 0.05; continue; }   # hci1 not there (yet)
    [ "$r" = 0 ] || return 1
    break
  done
  t=$(echo "$out" | awk '$1 == "heard" {print $2}' | tail -1)
  [ -n "$t" ] || return 1
  if [ -n "$start" ]; then echo $((t - start)); else echo "$t"; fi
}
# tb_wait_silent MS TIMEOUT_MS [HEX]: waits until nothing (or no HEX) has been heard for MS in a
# row; prints the monotonic ms when that was reached; status 1 if it never happened in TIMEOUT_MS
tb_wait_silent() {
  local ms=$1 timeout=$2 hex=${3:-} out
  out=$(tb_observe --absent-for "$ms" --timeout "$timeout" ${hex:+--hex "$hex"} --quiet) || return 1
  echo "$out" | awk '$1 == "silent" {print $2}' | tail -1
}
# tb_assert_silent MS [HEX]: fails the scenario if anything (or HEX) is heard within MS (off air)
tb_assert_silent() {
  local ms=$1 hex=${2:-}
  tb_observe --absent-for "$ms" ${hex:+--hex "$hex"} --quiet >/dev/null \
    || tb_fail "advertising ${hex:-data} heard within ${ms} ms, expected silence"
}

# --- LEDs (gpio-sim chip pinctrl-bcm2711; lines named as on a Pi 4: 0-15 by function) ---------

# tb_gpio_level N: prints the level (0/1) line N is driven to (sim_gpioN/value)
tb_gpio_level() { local v; read -r v <"$TB_GPIO_SYSFS/sim_gpio$1/value" && echo "$v"; }
# tb_gpio_sample N DURATION_MS [INTERVAL_MS]: samples line N (every 20 ms by default) and prints
# "on", "off" or "blink <Hz> <duty%>" (levels as driven: with active_low LEDs, invert yourself)
tb_gpio_sample() { "$TB_TOOLS/gpiosample" "$TB_GPIO_SYSFS/sim_gpio$1/value" "$2" "${3:-20}"; }
# tb_gpio_consumer N: prints the consumer holding line N (e.g. altbeacond); empty if released.
# libgpiod 1.x tools (bookworm) and 2.x tools (trixie, the aarch64 testbed) print it differently.
tb_gpio_consumer() {
  if _tb_gpiod_v2; then
    gpioinfo -c "$TB_GPIOCHIP" "$1" | sed -n 's/.*consumer="\([^"]*\)".*/\1/p'
    return
  fi
  gpioinfo "$TB_GPIO_LABEL" | awk -v n="$1" '
    $1 == "line" && $2 == n":" {
      if (match($0, /"[^"]*"[ \t]+"[^"]*"/)) { s = substr($0, RSTART, RLENGTH); sub(/^"[^"]*"[ \t]+"/, "", s); sub(/"$/, "", s); print s }
      exit
    }'
}
# _tb_gpiod_v2: status 0 if the gpio tools are libgpiod 2.x (the first line of --version only:
# 1.6's third line, "License: LGPLv2.1", has a "v2." too)
_tb_gpiod_v2() {
  [ -n "${_TB_GPIOD_V2:-}" ] || _TB_GPIOD_V2=$(gpioinfo --version 2>/dev/null | head -1 | grep -q ' v2\.' && echo yes || echo no)
  [ "$_TB_GPIOD_V2" = yes ]
}
# tb_gpio_pull N up|down: sets the simulated pull of line N (what an unrequested/input line reads)
tb_gpio_pull() { echo "pull-$2" >"$TB_GPIO_SYSFS/sim_gpio$1/pull"; }
# tb_gpioset_hold N LEVEL: gpioset drives line N to LEVEL and holds it, in the background, until
# killed; sets TB_GPIOSET_PID (call it directly, not in $(...)). libgpiod 1.x or 2.x tools.
tb_gpioset_hold() {
  if _tb_gpiod_v2; then
    gpioset -c "$TB_GPIOCHIP" "$1=$2" </dev/null >/dev/null 2>&1 &
  else
    gpioset --mode=signal "$TB_GPIO_LABEL" "$1=$2" </dev/null >/dev/null 2>&1 &
  fi
  TB_GPIOSET_PID=$!
}
# tb_gpioset_for N LEVEL MS: gpioset drives line N to LEVEL for about MS, then exits
tb_gpioset_for() {
  if _tb_gpiod_v2; then
    gpioset -c "$TB_GPIOCHIP" -p "${3}ms" -t 0 "$1=$2"
  else
    gpioset --mode=time --usec=$(($3 * 1000)) "$TB_GPIO_LABEL" "$1=$2"
  fi
}
# tb_hold_line N: holds line N (consumer gpioset) in the background, for a busy-line case
tb_hold_line() {
  tb_gpioset_hold "$1" 0
  echo "$TB_GPIOSET_PID" >"$TB_STATE/hold.$1"
  local i
  for ((i = 0; i < 100; i++)); do [ -n "$(tb_gpio_consumer "$1")" ] && return 0; _tb_sleep 0.02; done
  return 1
}
# tb_release_line N: releases a line held by tb_hold_line
tb_release_line() {
  local pid
  pid=$(cat "$TB_STATE/hold.$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -f "$TB_STATE/hold.$1"
}

# --- faults (SPEC §5) ---------------------------------------------------------------------------

# _tb_hcicmd HCI OGF OCF BYTES...: hcitool cmd (5 s at most: hcitool waits forever on a hung
# controller); prints the status byte of the reply (hex), or "--"
_tb_hcicmd() {
  local dev=$1; shift
  timeout 5 hcitool -i "$dev" cmd "$@" 2>/dev/null | awk '
    /HCI Event: 0x0e/ {cc = 1; next}
    /HCI Event: 0x0f/ {cs = 1; next}
    (cc || cs) && NF { if (cc) print toupper($4); else print toupper($1); exit }' | grep . || echo "--"
}
# tb_fault_reset [hciN]: controller reset by someone else (hciconfig hci0 reset)
tb_fault_reset() { hciconfig "${1:-hci0}" reset; }
# tb_fault_down [hciN]: adapter brought down (hciconfig hci0 down)
tb_fault_down() { hciconfig "${1:-hci0}" down; }
# tb_rfkill_id [hciN]: prints the rfkill index of hciN (it changes every time btvirt restarts)
tb_rfkill_id() {
  local f
  for f in /sys/class/rfkill/rfkill*; do
    [ "$(cat "$f/name" 2>/dev/null)" = "${1:-hci0}" ] && { echo "${f##*/rfkill}"; return 0; }
  done
  return 1
}
# tb_fault_rfkill_block [hciN]: soft-blocks the controller's rfkill switch
tb_fault_rfkill_block() { rfkill block "$(tb_rfkill_id "${1:-hci0}")"; }
# tb_fault_rfkill_unblock [hciN]: unblocks it again
tb_fault_rfkill_unblock() { rfkill unblock "$(tb_rfkill_id "${1:-hci0}")"; }
# tb_fault_remove: the controller vanishes (kills btvirt: hci0 AND hci1 go away)
tb_fault_remove() { tb_btvirt_stop; }
# tb_fault_return: the controller is back (btvirt restarted in the same flavour)
tb_fault_return() { tb_btvirt_start "$(cat "$TB_STATE/btvirt.flavour" 2>/dev/null || echo "${TB_FLAVOUR:-le}")"; }
# tb_fault_wedge [hciN]: the controller wedges (default hci0; the other one keeps answering): its
# HCI commands are swallowed by tools/wedge.so in btvirt, no Command Complete ever comes (the
# kernel logs "hci0: command 0x.... tx timeout" 2 s later; hcitool cmd waits forever). The first
# HCI Reset cures it: the one the kernel sends when the adapter is brought up (hciconfig down +
# up, hciconfig reset), or a raw one. Writes /run/tb-wedge; status 1 if btvirt lacks the shim.
tb_fault_wedge() { _tb_wedge_shim && echo "${1:-hci0}" >"$TB_WEDGE"; }
# tb_fault_wedge_hard [hciN]: a wedge that down/up does not cure: every command is swallowed,
# HCI Reset too (HCIDEVUP fails with ETIMEDOUT after about 2 s, the kernel logs "Opcode 0x0c03
# failed: -110", the adapter stays down); only tb_fault_unwedge ends it. Writes /run/tb-wedge-hard.
tb_fault_wedge_hard() { _tb_wedge_shim && echo "${1:-hci0}" >"$TB_WEDGE_HARD"; }
# tb_fault_unwedge: ends both kinds of wedge (removes the files). A command swallowed before
# stays unanswered (the next one waits for its tx timeout); an adapter that failed to come up
# stays down until brought up.
tb_fault_unwedge() { rm -f "$TB_WEDGE" "$TB_WEDGE_HARD"; }
# tb_wedged: status 0 while a wedge is on (a wedge file exists; an HCI Reset removes the soft one)
tb_wedged() { [ -e "$TB_WEDGE" ] || [ -e "$TB_WEDGE_HARD" ]; }
# _tb_wedge_shim: status 0 if the running btvirt has tools/wedge.so loaded
_tb_wedge_shim() {
  local pid maps
  pid=$(tb_btvirt_pid) && maps=$(<"/proc/$pid/maps") && [[ $maps == */wedge.so* ]] && return 0
  echo "tb_fault_wedge: btvirt is not running with tools/wedge.so" >&2
  return 1
}
# tb_fault_hang: the controller hangs (SIGSTOP btvirt: commands time out, on hci0 AND hci1)
tb_fault_hang() { kill -STOP "$(tb_btvirt_pid)"; }
# tb_fault_unhang: it answers again (SIGCONT)
tb_fault_unhang() { kill -CONT "$(tb_btvirt_pid)"; }
# tb_fault_adv_disable [hciN]: another process disables advertising (legacy LE Set Advertise
# Enable 0; if refused, LE Set Extended Advertising Enable 0 for all sets); prints the statuses
tb_fault_adv_disable() {
  local dev=${1:-hci0} st
  st=$(_tb_hcicmd "$dev" 0x08 0x000a 00)
  echo "legacy disable: status $st"
  if [ "$st" != "00" ]; then echo "extended disable: status $(_tb_hcicmd "$dev" 0x08 0x0039 00 00)"; fi
}
# tb_fault_adv_overwrite [hciN [HEX]]: another process writes other advertising data (default: flags
# + complete local name "intruder"); legacy LE Set Advertising Data, else extended for set 0
tb_fault_adv_overwrite() {
  local dev=${1:-hci0} hex=${2:-0201060909696e747275646572} st bytes len
  bytes=$(echo "$hex" | sed 's/../& /g')
  len=$(printf '%02x' $((${#hex} / 2)))
  # shellcheck disable=SC2086
  st=$(_tb_hcicmd "$dev" 0x08 0x0008 $len $bytes $(_tb_zeros $((31 - ${#hex} / 2))))
  echo "legacy set data: status $st"
  if [ "$st" != "00" ]; then
    # shellcheck disable=SC2086
    echo "extended set data (set 0): status $(_tb_hcicmd "$dev" 0x08 0x0037 00 03 01 $len $bytes)"
  fi
}
_tb_zeros() { local i; for ((i = 0; i < $1; i++)); do printf '00 '; done; }

# tb_promtool: `promtool check metrics` on stdin; where promtool is missing (the aarch64 root:
# Debian's prometheus package is 100 MB), says so and passes: x86_64 runs it
tb_promtool() {
  if command -v promtool >/dev/null; then promtool check metrics; else echo "# promtool: not in this root, checked on x86_64"; cat >/dev/null; fi
}

# --- bluetoothd (resets the controller and silently ends raw-HCI advertising, SPEC §8) ----------

# tb_bluetoothd_start: starts dbus-daemon --system (once) and bluetoothd; waits for org.bluez
tb_bluetoothd_start() {
  local i
  if [ ! -e "$TB_STATE/dbus.started" ]; then
    mkdir -p /run/dbus
    dbus-daemon --system --fork --nopidfile >>"$TB_STATE/dbus.log" 2>&1 || return 1
    : >"$TB_STATE/dbus.started"
  fi
  /usr/libexec/bluetooth/bluetoothd -n >>"$TB_STATE/bluetoothd.log" 2>&1 </dev/null &
  echo $! >"$TB_STATE/bluetoothd.pid"
  for ((i = 0; i < 100; i++)); do
    dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames \
      2>/dev/null | grep -q '"org.bluez"' && return 0
    _tb_sleep 0.05
  done
  echo "tb_bluetoothd_start: bluetoothd did not come up" >&2
  return 1
}
# tb_bluetoothd_stop: stops bluetoothd (SIGTERM, waits)
tb_bluetoothd_stop() {
  local pid i
  pid=$(cat "$TB_STATE/bluetoothd.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null
  for ((i = 0; i < 100; i++)); do _tb_alive "$pid" || break; _tb_sleep 0.05; done
  rm -f "$TB_STATE/bluetoothd.pid"
}
# tb_bluetoothd_restart: stops and starts bluetoothd
tb_bluetoothd_restart() { tb_bluetoothd_stop; tb_bluetoothd_start; }

# --- the study guide and the daemon -------------------------------------------------------------

# tb_studyguide_start hciN [HEX]: the Bluetooth SIG guide's shell sequence by hand: hciconfig up,
# LE Set Advertising Parameters (100 ms, ADV_NONCONN_IND), LE Set Advertising Data (HEX, default
# TB_RIG_HEX, zero padded to 31 bytes), LE Set Advertise Enable; prints each command's status
tb_studyguide_start() {
  local dev=${1:-hci0} hex=${2:-$TB_RIG_HEX} bytes len st rc=0
  bytes=$(echo "$hex" | sed 's/../& /g')
  len=$(printf '%02x' $((${#hex} / 2)))
  hciconfig "$dev" up || return 1
  st=$(_tb_hcicmd "$dev" 0x08 0x0006 a0 00 a0 00 03 00 00 00 00 00 00 00 00 07 00)
  echo "LE Set Advertising Parameters: status $st"; [ "$st" = 00 ] || rc=1
  # shellcheck disable=SC2086
  st=$(_tb_hcicmd "$dev" 0x08 0x0008 $len $bytes $(_tb_zeros $((31 - ${#hex} / 2))))
  echo "LE Set Advertising Data: status $st"; [ "$st" = 00 ] || rc=1
  st=$(_tb_hcicmd "$dev" 0x08 0x000a 01)
  echo "LE Set Advertise Enable: status $st"; [ "$st" = 00 ] || rc=1
  return $rc
}
# tb_daemon_start ARGS...: starts "$ALTBEACOND_BIN ARGS..." in the background (log in
# /tmp/altbeacond.log, pid in TB_DAEMON_PID); e.g. tb_daemon_start run --config /tmp/c.toml
tb_daemon_start() {
  [ -x "$ALTBEACOND_BIN" ] || tb_fail "no altbeacond binary at $ALTBEACOND_BIN"
  "$ALTBEACOND_BIN" "$@" >>/tmp/altbeacond.log 2>&1 </dev/null &
  TB_DAEMON_PID=$!
}
# tb_daemon_stop: SIGTERM to the daemon, waits (10 s, then SIGKILL); returns its exit status
tb_daemon_stop() {
  [ -n "${TB_DAEMON_PID:-}" ] || return 0
  local i rc
  kill "$TB_DAEMON_PID" 2>/dev/null
  for ((i = 0; i < 200; i++)); do _tb_alive "$TB_DAEMON_PID" || break; _tb_sleep 0.05; done
  kill -KILL "$TB_DAEMON_PID" 2>/dev/null
  wait "$TB_DAEMON_PID"; rc=$?
  TB_DAEMON_PID=""
  return $rc
}

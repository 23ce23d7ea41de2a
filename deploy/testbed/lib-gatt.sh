# shellcheck shell=bash
# Helpers for the GATT identity scenarios (SPEC §3): the bytes worked out by hand from SPEC §3,
# a central on hci1 (BlueZ's gatttool), and a log of what hci1 hears while it reads.

# Flags, then 0x11 bytes of Complete List of 128-bit Service UUIDs (07): the service
# 8C422626-0C6E-4B86-8EC7-9147B233D97E least significant byte first.
TBG_ADV=02010611077ed933b24791c78e864b6e0c2626428c
# The scan response for name "AltBeacon": length 10, Complete Local Name (09), the name's bytes.
TBG_RSP=0a09416c74426561636f6e
TBG_CHAR=a05f9df4-9d54-4600-9224-983b75b9d154
TBG_SERVICE=8c422626-0c6e-4b86-8ec7-9147b233d97e
# The central's controller (hci2 when hci1 keeps observing: see session-lib.sh's tbs_btvirt3).
TBG_CENTRAL=${TBG_CENTRAL:-hci1}

# tbg_addr: hci0's public address (the beacon's)
tbg_addr() { hciconfig hci0 | awk '/BD Address/ {print $3}'; }

# tbg_hex TEXT: TEXT's bytes as gatttool prints a value ("61 62 63")
tbg_hex() { printf '%s' "$1" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

# tbg_primaries: the primary services' UUIDs the central finds on hci0, one per line
tbg_primaries() {
  timeout 20 gatttool -i "$TBG_CENTRAL" -b "$(tbg_addr)" -t public --primary | sed -n 's/.*uuid: \([0-9a-f-]*\).*/\1/p'
}

# tbg_read_identity: what the library does, with gatttool on $TBG_CENTRAL: find the service by UUID,
# its characteristics, read the first (a long read: Read, then Read Blob); prints the value's
# bytes as gatttool does; fails when any step does, saying which and after how long. With
# TBG_STEP_TIMES=1 it says on stderr how long each step took.
tbg_read_identity() {
  local addr range start end chars handle value t0 steps=
  addr=$(tbg_addr)
  t0=$(tb_now_ms)
  range=$(timeout 20 gatttool -i "$TBG_CENTRAL" -b "$addr" -t public --primary --uuid="$TBG_SERVICE") \
    || { echo "primary service discovery failed after $(( $(tb_now_ms) - t0 )) ms" >&2; return 1; }
  steps="primary $(( $(tb_now_ms) - t0 ))"
  start=$(awk '{print $3}' <<<"$range"); end=$(awk '{print $6}' <<<"$range")
  [ -n "$start" ] && [ -n "$end" ] || { echo "service not found: $range" >&2; return 1; }
  # "Starting handle: 0007 Ending handle: 0009" (hex without 0x); -s/-e take decimal
  t0=$(tb_now_ms)
  chars=$(timeout 20 gatttool -i "$TBG_CENTRAL" -b "$addr" -t public --characteristics -s $((16#$start)) -e $((16#$end))) \
    || { echo "characteristic discovery failed after $(( $(tb_now_ms) - t0 )) ms" >&2; return 1; }
  steps="$steps, characteristics $(( $(tb_now_ms) - t0 ))"
  # "handle = 0x0008, char properties = 0x02, char value handle = 0x0009, uuid = a05f9df4-..."
  handle=$(grep -m1 "uuid = $TBG_CHAR" <<<"$chars" | sed 's/.*char value handle = \(0x[0-9a-f]*\),.*/\1/')
  [ -n "$handle" ] || { echo "characteristic not found: $chars" >&2; return 1; }
  t0=$(tb_now_ms)
  value=$(timeout 20 gatttool -i "$TBG_CENTRAL" -b "$addr" -t public --char-read -a "$handle") \
    || { echo "read of $handle failed after $(( $(tb_now_ms) - t0 )) ms" >&2; return 1; }
  steps="$steps, read $(( $(tb_now_ms) - t0 )) ms"
  [ "${TBG_STEP_TIMES:-}" = 1 ] && tb_log "read the identity: $steps" >&2
  sed 's/^Characteristic value\/descriptor: //; s/ *$//' <<<"$value"
}

# tbg_hold_scenario le|bt5: the hold scenario (scenarios/gatt-identity-hold*.sh) on btvirt with
# three controllers of that flavour: hci0 the beacon, hci1 the observer, hci2 the central, so
# that hci1's observer (which re-enables its scan ten times a second) never races the central.
# The central (gatttool) holds the link with its ATT socket. On the testbed's Linux 6.1 a socket
# released after its link is gone hits a BUG in hci_chan_del; gatttool's socket does when the
# daemon cuts the link (the daemon closes its own first): the central's kernel, not the beacon's.
tbg_hold_scenario() {
  local flavour=$1 mode addr t0 t1 held back during gap n obs
  tbs_btvirt3 "$flavour" || tb_fail "btvirt with three controllers did not start"
  TBG_CENTRAL=hci2
  hciconfig hci2 up || tb_fail "hci2 does not come up"
  if [ "$flavour" = bt5 ]; then
    # A dual-mode controller brought up without the management interface has LE off: the
    # kernel refuses an LE connection from it (ECONNREFUSED) before sending anything.
    btmgmt --index 2 le on >/dev/null && btmgmt --index 2 power on >/dev/null || tb_fail "LE on hci2"
  fi
  tbd_config "[gatt_identity]" 'identifier = "hold-test"'
  tbd_start
  if [ "$flavour" = le ]; then mode="legacy, 2 frames in turn"; else mode="extended, sets"; fi
  grep -q "$mode" /tmp/altbeacond.log || { tbd_dump; tb_fail "not on air as '$mode'"; }
  tbd_wait_frames 10000 "$TB_RIG_HEX" "$TBG_ADV" >/dev/null || { tbd_dump; tb_fail "AltBeacon and the identity not both heard"; }
  tb_observe_bg /tmp/during.log
  obs=$TB_OBSERVE_PID
  addr=$(tbg_addr)
  # gatttool's interactive mode connects and holds the link until its input ends. Not under
  # timeout(1), which passes a child's fatal signal on to its process group.
  (echo connect; sleep 60) | setsid gatttool -i hci2 -b "$addr" -t public -I >/tmp/hold.log 2>&1 &
  tbd_wait_log "central connected" 20 || { cat /tmp/hold.log; tbd_dump; tb_fail "the central did not connect"; }
  t0=$(tb_now_ms)
  tbd_wait_log "central disconnected" 45 || { cat /tmp/hold.log; tbd_dump; tb_fail "the central was not disconnected"; }
  t1=$(tb_now_ms)
  held=$((t1 - t0))
  grep -q "still connected after 30 s" /tmp/altbeacond.log || { tbd_dump; tb_fail "not disconnected for holding on"; }
  [ "$held" -ge 29000 ] && [ "$held" -le 33000 ] || { tbd_dump; tb_fail "disconnected after $held ms, not 30 s"; }
  back=$(tbd_wait_frames 10000 "$TBG_ADV") || { tbd_dump; tb_fail "connectable advertising did not come back"; }
  kill "$obs"; wait "$obs" 2>/dev/null
  # While connected (1 s after the connection to 0.5 s before the disconnection): no identity.
  during=$(awk -v a=$((t0 + 1000)) -v b=$((t1 - 500)) -v f="$TBG_ADV" '$1 > a && $1 < b && $4 == f' /tmp/during.log | wc -l)
  [ "$during" = 0 ] || { tbd_dump; tb_fail "the identity was advertised $during times while a central was connected"; }
  gap=$(awk -v f="$TB_RIG_HEX" '$4 == f { if (p) { d = $1 - p; if (d > m) m = d } p = $1 } END { print m + 0 }' /tmp/during.log)
  n=$(awk -v f="$TB_RIG_HEX" '$4 == f' /tmp/during.log | wc -l)
  [ "$n" -gt 50 ] && [ "$gap" -lt 3000 ] || { tbd_dump; tb_fail "AltBeacon heard $n times, longest gap $gap ms, while the central held on"; }
  tbd_alive
  grep -q "beacon off air\|re-arms:" /tmp/altbeacond.log && { tbd_dump; tb_fail "the connection was taken for a fault"; }
  tbd_finish
  tb_assert_silent 1500
  tb_pass "$mode: a central holding the link was disconnected after $held ms; identity not advertised while connected, back ${back} ms after; AltBeacon heard $n times meanwhile (longest gap ${gap} ms); silent after SIGTERM"
}

# tbg_count PATTERN: lines of the daemon's log matching PATTERN
tbg_count() { grep -c "$1" /tmp/altbeacond.log; }
# tbg_wait_count PATTERN N TIMEOUT_S: until the daemon's log has more than N lines matching PATTERN
tbg_wait_count() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do [ "$(tbg_count "$1")" -gt "$2" ] && return 0; _tb_sleep 0.05; done
  return 1
}

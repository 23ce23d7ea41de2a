# Shared by the image's update scripts (docs/image.md "Updates"); sourced, POSIX sh.
# The boot state (U-Boot environment, partition 2): BOOT_ORDER, BOOT_<slot>_LEFT (U-Boot and
# RAUC), ALTBEACON_TRIAL="<slot> <version>" (a slot written and not yet good: set by RAUC's
# post-install handler, cleared by the gate) and ALTBEACON_OUTCOME="<kind> <version> <unix time>
# <message>" (installed, failing, rolled-back: what Home Assistant shows after a reboot).
# /run/altbeacon-update/state: what the monitor publishes (key=value lines, written atomically).
. "${ALTBEACON_LIB:-/usr/lib/altbeacon-image}/write-atomic.sh"
ALTBEACON_UPDATE_DIR=${ALTBEACON_UPDATE_DIR:-/run/altbeacon-update}
ALTBEACON_IMAGE_VERSION_FILE=${ALTBEACON_IMAGE_VERSION_FILE:-/usr/lib/altbeacon-image/version}

ulog() { # PRIORITY MESSAGE: to the journal (and the console through the units' StandardError)
  printf '<%s>%s: %s\n' "$1" "${ulog_name:-altbeacon-update}" "$2" >&2
}
env_get() { fw_printenv -n "$1" 2>/dev/null || true; }
env_set() { # NAME [VALUE]: one write of the boot state (no VALUE: removed)
  if [ $# -ge 2 ] && [ -n "$2" ]; then fw_setenv "$1" "$2"; else fw_setenv "$1"; fi
}
booted_slot() { # A or B from the kernel command line (rauc.slot=, the boot script's), else nothing
  tr ' ' '\n' <"${ALTBEACON_CMDLINE:-/proc/cmdline}" | sed -n 's/^rauc\.slot=\([AB]\)$/\1/p' | tail -1
}
image_version() { head -n1 "$ALTBEACON_IMAGE_VERSION_FILE" 2>/dev/null | tr -cd '0-9A-Za-z.+~-' || true; }
# monitor_control: this card's own [mqtt] control (off, beacon or fleet) as the installed
# altbeacond reads monitor.toml: root's own reading, never the monitor's word (issue 49)
monitor_control() {
  c=$(altbeacond monitor --check --config "${ALTBEACON_ETC:-/etc/altbeacond}/monitor.toml" 2>/dev/null \
    | sed -n 's/^  control: \([a-z]*\).*/\1/p' | head -n1)
  echo "${c:-off}"
}
# is_download_failure RAUC_ERROR: the network or the server, not the bundle (tried again later;
# a refusal is for ever)
is_download_failure() {
  case "$1" in
    *"Couldn't connect"*|*"Could not connect"*|*"Could not resolve"*|*"Couldn't resolve"*|*"imeout"*|*"timed out"*|\
    *"onnection refused"*|*"onnection reset"*|*"Network is unreachable"*|*"No route to host"*|*"transfer closed"*|\
    *"Recv failure"*|*"Send failure"*|*"HTTP error"*|*"HTTP status"*|*"returned error: 5"*|*"Failed to download"*|\
    *"failed to download"*|*"Partial file"*|*"Failure when receiving"*|*"server not responding"*|\
    *"Failed to stream bundle"*|*"failed to configure streaming"*) return 0 ;;
  esac
  return 1
}
# target_slot: the slot RAUC writes (RAUC_TARGET_SLOTS, RAUC_SLOT_BOOTNAME_<n>), in its handlers
target_slot() {
  ts=""
  for n in ${RAUC_TARGET_SLOTS:-}; do
    eval "b=\${RAUC_SLOT_BOOTNAME_$n:-}"
    [ -z "$b" ] || ts=$b
  done
  echo "$ts"
}
# put_on_trial: ALTBEACON_TRIAL for the slot RAUC writes, with the bundle's version
# (RAUC_BUNDLE_MOUNT_POINT) and whether this card is on air now (its bar); fails (1) when RAUC
# named no target slot
put_on_trial() {
  slot=$(target_slot)
  [ -n "$slot" ] || return 1
  version=$(sed -n 's/^version=//p' "${RAUC_BUNDLE_MOUNT_POINT:-/nonexistent}/manifest.raucm" 2>/dev/null | head -n1 | tr -cd '0-9A-Za-z.+~-')
  # the daemon's own status file named: RAUC's service may have a RUNTIME_DIRECTORY of its own
  if altbeacond health --status /run/altbeacond/status.json >/dev/null 2>&1 || [ $? -le 1 ]; then prior=on-air; else prior=off-air; fi
  env_set ALTBEACON_TRIAL "$slot ${version:-unknown} $prior"
}
# one line, no characters that would break a key=value file or the boot state
one_line() { printf '%s' "$*" | tr '\n\r\t' '   ' | tr -cd '[:print:]' | cut -c1-300; }

# rauc_refusal RAUC_ERROR: RAUC's own words and, where they name it, the real reason in ours: the
# card's clock (a Pi has no real-time clock; the keyring checks the signer at the bundle's signing
# time, so this is a bundle signed before its certificate began), an expired key, another key, or
# a damaged file
rauc_refusal() {
  case "$1" in
    *"not yet valid"*) hint="signed before its certificate's start (the signing machine's clock?); this card's clock reads $(date -u +%Y-%m-%dT%H:%MZ)" ;;
    *"has expired"*) hint="the fleet key that signed it had expired when it was signed: sign with a current key" ;;
    *"local issuer"*|*"signature failure"*|*"self-signed certificate"*|*"self signed certificate"*|*"unable to verify"*)
      hint="not signed with this fleet's key" ;;
    *"revoked"*) hint="signed with a revoked key" ;;
    "") hint="" ;;
    *"signature"*|*"Signature"*) hint="its signature does not verify: damaged, or not this fleet's" ;;
    *) hint="" ;;
  esac
  printf 'RAUC: %s%s' "$(one_line "${1:-cannot read it}")" "${hint:+ ($hint)}"
}

# write_progress PERCENT: the state file write_state last wrote, its progress line changed; no read
# of the boot state (one call per step of RAUC's, so it keeps up with RAUC even where a fork is
# slow: write_state's reads of the boot state took 2 s a line under emulation)
write_progress() {
  while IFS= read -r l; do
    case "$l" in progress=*) echo "progress=$1" ;; *) echo "$l" ;; esac
  done <"$ALTBEACON_UPDATE_DIR/state" | write_atomic "$ALTBEACON_UPDATE_DIR/state" 0644
}
# write_state PHASE [PROGRESS]: the state file from the boot state and this run's last outcome
# ($last_kind, $last_version, $last_time, $last_message: a refusal lives only until reboot)
write_state() {
  phase=$1 progress=${2:-}
  outcome=$(env_get ALTBEACON_OUTCOME)
  kind=none over="" otime="" msg=""
  if [ -n "$outcome" ]; then
    kind=${outcome%% *}; rest=${outcome#* }
    # the boot state's "failing" (a slot on trial failed, the card reboots) is the file's "failed"
    [ "$kind" != failing ] || kind=failed
    over=${rest%% *}; rest=${rest#* }
    otime=${rest%% *}; msg=${rest#* }
    [ "$msg" != "$otime" ] || msg=""
  fi
  # a refusal or failure of this boot's own install is newer than the boot state's outcome
  if [ -n "${last_kind:-}" ] && [ "${last_time:-0}" -ge "${otime:-0}" ] 2>/dev/null; then
    kind=$last_kind over=$last_version otime=$last_time msg=$last_message
  fi
  mkdir -p "$ALTBEACON_UPDATE_DIR"
  {
    echo "installed_version=$(image_version)"
    echo "slot=$(booted_slot)"
    echo "phase=$phase"
    [ -z "$progress" ] || echo "progress=$progress"
    echo "outcome=$kind"
    [ -z "$over" ] || echo "outcome_version=$over"
    [ -z "$msg" ] || echo "message=$(one_line "$msg")"
    [ -z "$otime" ] || echo "time=$otime"
  } | write_atomic "$ALTBEACON_UPDATE_DIR/state" 0644
}

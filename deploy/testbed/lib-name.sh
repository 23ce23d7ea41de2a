# shellcheck shell=bash
# The beacon's name (`[beacon] name`, default the hostname; SPEC §12): what Home Assistant's
# Bluetooth integration and its iBeacon Tracker read is BlueZ's Device1.Name for the beacon's
# address, filled from the scan response of its scannable (ADV_SCAN_IND) frames. Run by
# scenarios/scan-name.sh (legacy rotation) and scan-name-sets.sh (extended sets).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/lib-gatt.sh"

# tbn_rsp NAME: the scan response for NAME as hex: length, Complete Local Name (09), the bytes
tbn_rsp() {
  local hex
  hex=$(printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n')
  printf '%02x09%s' $((${#hex} / 2 + 1)) "$hex"
}

# tbn_config [NAME_LINE]: the scenario's config, with NAME_LINE (e.g. 'name = "x"') in [beacon];
# written aside and renamed into place: the daemon sees one edit
tbn_config() {
  {
    printf '[beacon]\nuuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"\nmajor = 1\nminor = 2\n'
    [ -n "${1:-}" ] && printf '%s\n' "$1"
    printf '%s\n' "[ibeacon]" "major = 7" "[bluetooth]" "rotation_ms = 300" "[watchdog]" "check_interval_s = 600"
  } >"$TBD_CONFIG.new" && mv "$TBD_CONFIG.new" "$TBD_CONFIG"
}

# tbn_device_path: the beacon's (hci0's public address) Device1 object under hci1
tbn_device_path() { echo "/org/bluez/hci1/dev_$(tbg_addr | tr ':' '_')"; }

# tbn_name NAME: BlueZ's Device1.Name of the beacon under hci1, as UTF-8 (busctl escapes it)
tbn_name() {
  dbus-send --system --print-reply=literal --dest=org.bluez "$(tbn_device_path)" org.freedesktop.DBus.Properties.Get \
    string:org.bluez.Device1 string:Name 2>/dev/null | sed 's/^ *variant *//'
}

# tbn_name_seen NAME TIMEOUT_S: discovery on hci1 through bluetoothd (bluetoothctl, as a user's
# `scan le` is: an active LE scan) until BlueZ's Device1.Name for the beacon is NAME. Sets
# TBN_SECS to the seconds it took; fails the scenario with what BlueZ has (call it directly, not
# in $(...))
tbn_name_seen() {
  local want=$1 s=$2 path got="" i addr1 pid feeder
  addr1=$(hciconfig hci1 | awk '/BD Address/ {print $3}')
  path=$(tbn_device_path)
  # The discovery session lasts as long as bluetoothctl's bus connection: keep its input open.
  # Through a fifo, not a pipe: both ends' pids are known and both are ended once the name is
  # seen (a feeder left sleeping held the scenario's output open for its whole 30 s).
  rm -f /tmp/bluetoothctl.in; mkfifo /tmp/bluetoothctl.in
  bluetoothctl </tmp/bluetoothctl.in >>/tmp/bluetoothctl.log 2>&1 &
  pid=$!
  { echo "select $addr1"; echo "power on"; _tb_sleep 0.5; echo "scan le"; _tb_sleep "$((s + 2))"; echo "scan off"; echo quit; } \
    >/tmp/bluetoothctl.in &
  feeder=$!
  for ((i = 0; i < s * 10; i++)); do
    got=$(tbn_name)
    [ "$got" = "$want" ] && break
    _tb_sleep 0.1
  done
  kill "$feeder" "$pid" 2>/dev/null; wait "$feeder" "$pid" 2>/dev/null
  [ "$got" = "$want" ] || {
    echo "--- Device1 of $path: '$got'"; busctl introspect org.bluez "$path" org.bluez.Device1 2>&1 | head -30
    echo "--- bluetoothctl:"; tail -30 /tmp/bluetoothctl.log; tbd_dump; tb_fail "BlueZ on hci1 did not name the beacon '$want'"
  }
  TBN_SECS=$((i / 10))
}

# tbn_scenario MODE: the scenario, MODE the advertiser's mode line ("legacy, 2 frames in turn" or
# "extended, sets")
tbn_scenario() {
  local mode=$1 host=tb-hall-beacon named="Lobby b\u00e9acon" rsp t1 t2
  hostname "$host" || tb_fail "cannot set the guest's hostname"
  # 1. No name in the file: the hostname; check prints each frame's type and scan response.
  tbn_config
  rsp=$(tbn_rsp "$host")
  "$ALTBEACOND_BIN" check --config "$TBD_CONFIG" >/tmp/check.txt || { cat /tmp/check.txt; tb_fail "check refused the config"; }
  for f in altbeacon ibeacon; do
    grep -qx "scan-response\[$f\]: $rsp" /tmp/check.txt && grep -qx "advertising-type\[$f\]: ADV_SCAN_IND" /tmp/check.txt \
      || { cat /tmp/check.txt; tb_fail "check does not show $f's scan response $rsp (ADV_SCAN_IND)"; }
  done
  tbd_start
  grep -q "$mode" /tmp/altbeacond.log || { tbd_dump; tb_fail "not on air as '$mode'"; }
  # An active scan hears the name as the frames' scan response.
  TB_OBSERVER=hci1 "$TB_TOOLS/observe" -i hci1 --active --until-hex "$rsp" --timeout 10000 >/dev/null \
    || { tbd_dump; tb_fail "the scan response $rsp was not heard by an active scan"; }

  # 2. bluetoothd on the observer's controller (it resets hci0 too as it starts: the daemon re-arms).
  tb_bluetoothd_start || tb_fail "bluetoothd did not start"
  tbn_name_seen "$host" 30
  t1=$TBN_SECS

  # 3. `[beacon] name` by an edit (UTF-8): applied without a restart; BlueZ follows.
  named=$(printf "$named")
  tbn_config "name = \"$named\""
  tbn_name_seen "$named" 30
  t2=$TBN_SECS

  # 4. name = "": the frames go back to ADV_NONCONN_IND with no scan response (the study guide's).
  tb_bluetoothd_stop
  hciconfig hci1 up || tb_fail "hci1 does not come up after bluetoothd"
  tbn_config 'name = ""'
  # bluetoothd powered hci0 off as it left: the daemon brings it back, then the edit applies.
  tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || { tbd_dump; tb_fail "the beacon is not heard after bluetoothd stopped"; }
  _tb_sleep 2
  TB_OBSERVER=hci1 "$TB_TOOLS/observe" -i hci1 --active --hex "$(tbn_rsp "$named")" --absent-for 3000 --timeout 15000 --quiet >/dev/null \
    || { tbd_dump; tb_fail "the old name is still answered after name = \"\""; }
  TB_OBSERVER=hci1 "$TB_TOOLS/observe" -i hci1 --active --hex "$rsp" --absent-for 3000 --timeout 15000 --quiet >/dev/null \
    || { tbd_dump; tb_fail "the hostname is answered after name = \"\""; }
  tb_wait_heard "$TB_RIG_HEX" 5000 >/dev/null || { tbd_dump; tb_fail "the beacon is not heard with name = \"\""; }
  tbd_alive
  tbd_finish
  tb_assert_silent 1500
  tb_pass "$mode: hostname '$host' in every frame's scan response (check and an active scan agree); BlueZ on hci1 named the beacon '$host' within ${t1} s of discovery, '$named' within ${t2} s after the edit; name = \"\": no scan response any more; silent after SIGTERM"
}

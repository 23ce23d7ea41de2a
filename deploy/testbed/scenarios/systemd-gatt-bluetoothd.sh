# init: systemd
# timeout: 300
# SPEC §3 with bluetoothd, as on Raspberry Pi OS: dbus.service and bluetooth.service running,
# altbeacond under the shipped unit's sandbox (its own user, two capabilities,
# RestrictAddressFamilies=, SystemCallFilter=, ProtectSystem=strict). `[gatt_identity]` added by an
# edit and `systemctl reload`: the daemon joins the system bus as its unprivileged user and
# registers the service with bluetoothd (GattManager1); STATUS= says bluetoothd serves it; a
# central on hci1 reads the identifier by UUID from bluetoothd's database; `systemctl stop` takes
# everything off air and the registration goes with the daemon's bus connection.
. "$TB_REPO/deploy/testbed/lib.sh"
. "$TB_REPO/deploy/testbed/lib-gatt.sh"
CONF=/etc/altbeacond/config.toml
prop() { systemctl show -P "$1" altbeacond.service; }
journal() { journalctl -b -u altbeacond.service --no-pager -o cat | tail -n "${1:-30}"; }
fail() {
  echo "--- journal:"; journal 40
  echo "--- bluetoothd:"; journalctl -b -u bluetooth.service --no-pager -o cat | tail -n 20
  tb_fail "$*"
}
logged() { journal 60 | grep -q "$1"; }
wait_for() {  # SECONDS COMMAND...: until COMMAND succeeds
  local s=$1 i; shift
  for ((i = 0; i < s * 10; i++)); do "$@" && return 0; _tb_sleep 0.1; done
  return 1
}
wait_for 30 test "$(prop ActiveState)" = active || fail "altbeacond.service is $(prop ActiveState)"
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || fail "beacon not heard"
systemctl start dbus.service bluetooth.service || fail "bluetooth.service did not start"
wait_for 30 test "$(systemctl show -P ActiveState bluetooth.service)" = active || fail "bluetooth.service is not active"
# bluetoothd resets the controller as it starts: the daemon re-arms.
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || fail "beacon not heard after bluetoothd started"
id="systemd-bluetoothd-identity"
printf '%s\n' '[gatt_identity]' "identifier = \"$id\"" '[bluetooth]' 'rotation_ms = 300' >>"$CONF"
systemctl reload altbeacond.service || fail "systemctl reload failed"
tb_wait_heard "$TBG_ADV" 10000 >/dev/null || fail "the identity is not on air after the reload"
wait_for 40 logged "GATT identity served by bluetoothd over D-Bus" || fail "the identity was not registered with bluetoothd"
wait_for 5 eval 'case "$(prop StatusText)" in *"GATT identity served by bluetoothd (D-Bus)"*) true ;; *) false ;; esac' \
  || fail "STATUS= is '$(prop StatusText)'"
st=$(prop StatusText)
# bluetoothd's database (its Device Information service, 180a) with the identity service in it
p=$(tbg_primaries) || fail "the central could not list the primary services"
grep -qx "$TBG_SERVICE" <<<"$p" && grep -q "^0000180a-" <<<"$p" || { echo "$p"; fail "the identity service is not in bluetoothd's database"; }
tb_wait_heard "$TBG_ADV" 10000 >/dev/null || fail "the identity is not on air after the listing"
value=$(tbg_read_identity) || fail "the central could not read the identity through bluetoothd"
[ "$value" = "$(tbg_hex "$id")" ] || fail "read '$value', not the identifier"
journal 60 | grep -qi "permission denied\|EPERM\|not permitted\|AccessDenied\|refused" && fail "something was refused under the sandbox"
systemctl stop altbeacond.service
tb_assert_silent 1500
tb_pass "under the unit's sandbox with bluetooth.service: [gatt_identity] applied by reload and registered with bluetoothd over D-Bus as user altbeacond, STATUS='$st'; identifier read by UUID through bluetoothd; off air after systemctl stop"

# init: systemd
# timeout: 240
# SPEC §3 under the shipped unit's sandbox (a real systemd as PID 1, the unit's user, its two
# capabilities, RestrictAddressFamilies=, SystemCallFilter=): `[gatt_identity]` added by an
# edit and `systemctl reload`; STATUS= names who serves the identity; a central on hci1 reads it
# by UUID from the daemon's own ATT server (bluetooth.service stopped); `systemctl stop` takes
# the identity and the AltBeacon frame off air.
. "$TB_REPO/deploy/testbed/lib.sh"
. "$TB_REPO/deploy/testbed/lib-gatt.sh"
CONF=/etc/altbeacond/config.toml
prop() { systemctl show -P "$1" altbeacond.service; }
journal() { journalctl -b -u altbeacond.service --no-pager -o cat | tail -n "${1:-30}"; }
fail() { echo "--- journal:"; journal 40; tb_fail "$*"; }
logged() { journal 40 | grep -q "$1"; }
wait_for() {  # SECONDS COMMAND...: until COMMAND succeeds
  local s=$1 i; shift
  for ((i = 0; i < s * 10; i++)); do "$@" && return 0; _tb_sleep 0.1; done
  return 1
}
# No bluetoothd: udev starts bluetooth.target (so bluetoothd) when the controllers appear; stop
# it, so the daemon serves the identity itself (systemd-gatt-bluetoothd is the other case).
# bluetoothd powers its adapters off as it exits: the daemon brings hci0 up, the central's comes
# up by hand.
systemctl stop bluetooth.service 2>/dev/null
hciconfig hci1 up || tb_fail "hci1 does not come up"
wait_for 30 test "$(prop ActiveState)" = active || fail "altbeacond.service is $(prop ActiveState)"
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || fail "beacon not heard"
id="systemd-sandbox-identity"
printf '%s\n' '[gatt_identity]' "identifier = \"$id\"" '[bluetooth]' 'rotation_ms = 300' >>"$CONF"
systemctl reload altbeacond.service || fail "systemctl reload failed"
tb_wait_heard "$TBG_ADV" 10000 >/dev/null || fail "the identity is not on air after the reload"
wait_for 10 logged "GATT identity served by" || fail "the journal does not say who serves the identity"
st=$(prop StatusText)
case "$st" in *"GATT identity served by altbeacond (own ATT server)"*) ;; *) fail "STATUS= is '$st'" ;; esac
value=$(tbg_read_identity) || fail "the central could not read the identity under the sandbox"
[ "$value" = "$(tbg_hex "$id")" ] || fail "read '$value', not the identifier"
wait_for 10 logged "central disconnected" || fail "the disconnection was not noticed"
journal 40 | grep -qi "permission denied\|EPERM\|not permitted" && fail "something was refused under the sandbox"
systemctl stop altbeacond.service
tb_assert_silent 1500
tb_pass "under the unit's sandbox: [gatt_identity] applied by reload, STATUS='$st'; identifier read by UUID from the own ATT server; off air after systemctl stop"

# flavour: le
# timeout: 300
# Issue 30: an unprivileged local user floods the daemon's D-Bus connection (the GATT identity
# registered with bluetoothd) with unicast signals, 1.1 MB ones (over the daemon's 1 MiB) among
# thousands of small ones, while a central reads the identity through bluetoothd twice. The
# connection stays (no re-registration, nothing closed), the big ones are dropped unread and said
# once, the small ones are handled from their headers, and both reads return the identifier.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
. "$TB_REPO/deploy/testbed/frames-lib.sh"
. "$TB_REPO/deploy/testbed/lib-gatt.sh"
. "$TB_REPO/deploy/testbed/session-lib.sh"
id="urn:altbeacond:dbus-flood-identity:0123"
BY_BLUEZ="served by bluetoothd over D-Bus"
tbs_btvirt3 le || tb_fail "btvirt with three controllers did not start"
TBG_CENTRAL=hci2
tb_bluetoothd_start || tb_fail "bluetoothd did not start"
tbd_config "[gatt_identity]" "identifier = \"$id\"" "[bluetooth]" "rotation_ms = 300"
tbd_start
tbg_wait_count "$BY_BLUEZ" 0 15 || { tbd_dump; tb_fail "the identity was not registered with bluetoothd"; }
# the daemon's unique name on the bus: the one whose process is the daemon's
name=
for n in $(dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames | sed -n 's/.*string "\(:[0-9.]*\)".*/\1/p'); do
  p=$(dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID "string:$n" 2>/dev/null | awk '/uint32/ {print $2}')
  [ "$p" = "$TB_DAEMON_PID" ] && { name=$n; break; }
done
[ -n "$name" ] || tb_fail "the daemon's bus name not found"
bluez0=$(tbg_count "$BY_BLUEZ") reg0=$(tbg_count "registering")
cpu0=$(tb_cpu_ticks "$TB_DAEMON_PID") wall0=$(tb_now_ms)
# What the bus holds for the daemon, not yet read by it: now and at the most (dbus-daemon's
# Debug.Stats). A daemon that reads slower than the flood comes falls behind here, and a
# ReadValue call from bluetoothd waits behind all of it.
bus_backlog() {
  dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.Debug.Stats.GetConnectionStats "string:$name" \
    | awk '/string "(OutgoingBytes|PeakOutgoingBytes)"/ { k = $2; getline; v[k] = $3 }
           END { printf "%s bytes queued for the daemon, %s at the most\n", v["\"OutgoingBytes\""], v["\"PeakOutgoingBytes\""] }'
}
# The flood, as user nobody, for as long as the reads take.
(
  for i in $(seq 20); do
    runuser -u nobody -- python3 "$TB_REPO/deploy/testbed/tools/dbus-flood.py" "$name" --rounds 2 --small 500 || exit 1
  done
) >/tmp/flood.log 2>&1 &
flood=$!
reads=0 took= TBG_STEP_TIMES=1
for n in 1 2; do
  t0=$(tb_now_ms)
  value=$(tbg_read_identity) || { tbd_dump; cat /tmp/flood.log; tb_fail "the central could not read the identity during the flood (read $n; $(bus_backlog))"; }
  [ "$value" = "$(tbg_hex "$id")" ] || { tbd_dump; tb_fail "read '$value' during the flood, not the identifier"; }
  reads=$((reads + 1)) took="$took $(( $(tb_now_ms) - t0 ))"
  tbd_wait_frames 40000 "$TBG_ADV" >/dev/null || { tbd_dump; tb_fail "connectable advertising did not come back after read $n"; }
done
kill "$flood" 2>/dev/null; wait "$flood" 2>/dev/null
backlog=$(bus_backlog)
cpu_ms=$(( ($(tb_cpu_ticks "$TB_DAEMON_PID") - cpu0) * 1000 / $(getconf CLK_TCK) )) wall_ms=$(( $(tb_now_ms) - wall0 ))
signals=$(awk '{ s += $2 } END { print s + 0 }' /tmp/flood.log)
[ "$signals" -gt 1000 ] || { cat /tmp/flood.log; tb_fail "the flood sent only $signals signals"; }
[ "$(tbg_count "dropped a .*-byte message from the D-Bus system bus")" = 1 ] \
  || { tbd_dump; tb_fail "the dropped messages were not said exactly once"; }
grep -qE "bluetoothd cannot serve it|not a D-Bus message|left the bus" /tmp/altbeacond.log && { tbd_dump; tb_fail "the bus connection fell during the flood"; }
[ "$(tbg_count "registering")" = "$reg0" ] && [ "$(tbg_count "$BY_BLUEZ")" = "$bluez0" ] \
  || { tbd_dump; tb_fail "the identity was registered again during the flood"; }
tbd_alive
tbd_finish
tb_bluetoothd_stop
tb_pass "an unprivileged user's $signals unicast signals (1.1 MB ones among them): the identifier read $reads times through bluetoothd (ms:$took), the connection kept, no re-registration, the big ones said once; the daemon used ${cpu_ms} ms of CPU in those ${wall_ms} ms; $backlog"

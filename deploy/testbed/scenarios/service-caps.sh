# The service as deploy/altbeacond.service runs it, without systemd (none runs in the testbed):
# the unit's User= (altbeacond if the host has it, else nobody:nogroup; the guest shares the
# host's /etc/passwd), ONLY CAP_NET_RAW + CAP_NET_ADMIN (ambient, inheritable and bounding), no
# new privileges, GPIO through a group (the unit's SupplementaryGroups=gpio; here nogroup),
# JOURNAL_STREAM, STATE_DIRECTORY (owned by that user, as StateDirectory= makes it) and a
# NOTIFY_SOCKET served by a listener with WATCHDOG_USEC=2 s.
# Checks: the notify protocol (READY=1, STATUS=, WATCHDOG=1 at about 1 s, STOPPING=1), the
# beacon heard on hci1, the status LED lit, priority-prefixed logs, and a clean stop off air.
# Then the same daemon with no capabilities must exit 77 naming CAP_NET_RAW and CAP_NET_ADMIN.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
UNIT=$TB_REPO/deploy/altbeacond.service
NOTIFY=/tmp/notify.sock NLOG=/tmp/notify.log

user=$(sed -n 's/^User=//p' "$UNIT" | tail -1)
group=$(sed -n 's/^Group=//p' "$UNIT" | tail -1)
if [ -n "$user" ] && getent passwd "$user" >/dev/null && getent group "$group" >/dev/null; then
  tb_log "running as the unit's User=$user Group=$group"
else
  tb_log "the unit's User=$user is not in this /etc/passwd: running as nobody:nogroup instead"
  user=nobody group=nogroup
fi
caps=$(sed -n 's/^AmbientCapabilities=//p' "$UNIT" | tr 'A-Z ' 'a-z\n' | sed 's/^cap_//' | grep . | paste -sd,)
bnd=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z ' 'a-z\n' | sed 's/^cap_//' | grep . | paste -sd,)
[ "$caps" = "net_raw,net_admin" ] && [ "$bnd" = "$caps" ] \
  || tb_fail "the unit's capabilities are '$caps' (ambient) / '$bnd' (bounding), expected CAP_NET_RAW CAP_NET_ADMIN"
grep -qx 'NoNewPrivileges=yes' "$UNIT" || tb_fail "the unit lacks NoNewPrivileges=yes"
ncaps="+${caps//,/,+}"
# the GPIO chip for the unit's group (on Pi OS: root:gpio 0660 by udev)
chgrp "$group" "$TB_GPIOCHIP" && chmod 660 "$TB_GPIOCHIP"

# priv CAPS: the setpriv command line for the unit's user with exactly CAPS (+net_raw,... or "")
priv() {
  local c=$1
  PRIV=(setpriv --reuid="$user" --regid="$group" --clear-groups --no-new-privs
    --inh-caps="-all${c:+,$c}" --ambient-caps="-all${c:+,$c}" --bounding-set="-all${c:+,$c}" --)
}

# the notify listener (what systemd does with NOTIFY_SOCKET): one "<ms> LINE" per datagram line
rm -f "$NOTIFY" "$NLOG"
python3 - "$NOTIFY" "$NLOG" <<'EOF' &
import os, socket, sys, time
path, log = sys.argv[1], open(sys.argv[2], "a", buffering=1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path + ".new"); os.chmod(path + ".new", 0o666); os.rename(path + ".new", path)
while True:
    d = s.recv(65536)
    t = int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1000)
    for line in d.decode("utf-8", "replace").split("\n"):
        if line:
            log.write("%d %s\n" % (t, line))
EOF
LISTENER=$!
for _ in $(seq 200); do [ -S "$NOTIFY" ] && break; _tb_sleep 0.05; done
[ -S "$NOTIFY" ] || tb_fail "the notify listener did not start"

tbd_config "$(tbd_leds)"
# the unit's StateDirectory=: systemd makes it, owned by the service's user, mode 0700, and
# passes it as STATE_DIRECTORY
state=/tmp/state/altbeacond
mkdir -p "$state" && chown "$user:$group" "$state" && chmod 700 "$state"
t0=$(tb_now_ms)
priv "$ncaps"
# a simple command (no function, no subshell): $! is the daemon itself (setpriv execs it)
NOTIFY_SOCKET=$NOTIFY WATCHDOG_USEC=2000000 JOURNAL_STREAM=0:0 STATE_DIRECTORY=$state \
  "${PRIV[@]}" "$ALTBEACOND_BIN" run --config "$TBD_CONFIG" >>/tmp/altbeacond.log 2>&1 </dev/null &
TB_DAEMON_PID=$!
ms=$(tb_wait_heard "$TB_RIG_HEX" 15000 "$t0") || { tbd_dump; tb_fail "beacon not heard within 15 s of start"; }
tb_log "beacon heard on hci1 ${ms} ms after start, as $user with only $caps"

st=/proc/$TB_DAEMON_PID/status
uid=$(awk '/^Uid:/ {print $2}' "$st") eff=$(awk '/^CapEff:/ {print $2}' "$st")
amb=$(awk '/^CapAmb:/ {print $2}' "$st") bset=$(awk '/^CapBnd:/ {print $2}' "$st")
nnp=$(awk '/^NoNewPrivs:/ {print $2}' "$st")
tb_log "daemon: uid $uid CapEff $eff CapAmb $amb CapBnd $bset NoNewPrivs $nnp"
[ "$uid" = "$(id -u "$user")" ] || tb_fail "daemon uid $uid, expected $user"
[ "$eff" = 0000000000003000 ] && [ "$amb" = 0000000000003000 ] && [ "$bset" = 0000000000003000 ] \
  || tb_fail "capabilities are not exactly CAP_NET_ADMIN + CAP_NET_RAW (0x3000)"
[ "$nnp" = 1 ] || tb_fail "NoNewPrivs is $nnp"

for _ in $(seq 60); do grep -q ' READY=1$' "$NLOG" 2>/dev/null && break; _tb_sleep 0.05; done
grep -q ' READY=1$' "$NLOG" || { cat "$NLOG"; tbd_dump; tb_fail "no READY=1 on NOTIFY_SOCKET"; }
grep -q ' STATUS=.' "$NLOG" || { cat "$NLOG"; tb_fail "no STATUS= on NOTIFY_SOCKET"; }
tb_log "READY=1; $(grep ' STATUS=' "$NLOG" | tail -1 | cut -d' ' -f2-)"

# WATCHDOG_USEC=2 s: pings every ~1 s; over 4 s expect 3 to 5 (more would be busy)
w0=$(grep -c ' WATCHDOG=1$' "$NLOG")
_tb_sleep 4
w1=$(grep -c ' WATCHDOG=1$' "$NLOG")
pings=$((w1 - w0))
tb_log "WATCHDOG=1: $pings pings in 4 s (WATCHDOG_USEC=2000000)"
[ "$pings" -ge 3 ] && [ "$pings" -le 5 ] || { cat "$NLOG"; tb_fail "$pings WATCHDOG=1 pings in 4 s, expected about 4"; }

[ "$(tb_gpio_level 17)" = 1 ] || { tbd_dump; tb_fail "status LED (GPIO17) not lit: no GPIO access through the group?"; }
[ "$(tb_gpio_consumer 17)" = altbeacond ] || tb_fail "GPIO17 held by '$(tb_gpio_consumer 17)'"
tb_log "status LED on through group $group"
bad=$(grep -cv '^<[0-7]>' /tmp/altbeacond.log)
[ "$bad" = 0 ] || { tbd_dump; tb_fail "$bad log lines without a <N> priority prefix under JOURNAL_STREAM"; }
grep -qi 'permission\|denied' /tmp/altbeacond.log && { tbd_dump; tb_fail "permission trouble in the log"; }
cmp -s "$state/last-good.toml" "$TBD_CONFIG" || { ls -l "$state"; tbd_dump; tb_fail "no last good config in STATE_DIRECTORY"; }
tb_log "STATE_DIRECTORY: the applied config stored as $(stat -c '%n (%U, %a)' "$state/last-good.toml")"

tbd_finish
grep -q ' STOPPING=1$' "$NLOG" || { cat "$NLOG"; tb_fail "no STOPPING=1 on NOTIFY_SOCKET"; }
tb_assert_silent 1500 "$TB_RIG_HEX"
tb_log "SIGTERM: exit 0, STOPPING=1, off air"

# without capabilities: exit 77 (EX_NOPERM), naming both
rc=0
priv ""
out=$("${PRIV[@]}" "$ALTBEACOND_BIN" run --config "$TBD_CONFIG" 2>&1 </dev/null) || rc=$?
echo "$out" | sed 's/^/# no caps: /'
[ "$rc" = 77 ] || tb_fail "without capabilities: exit $rc, expected 77"
echo "$out" | grep -q CAP_NET_RAW && echo "$out" | grep -q CAP_NET_ADMIN \
  || tb_fail "without capabilities: the message does not name CAP_NET_RAW and CAP_NET_ADMIN"
# with only one of the two: also 77
rc=0
priv +net_raw
out=$("${PRIV[@]}" "$ALTBEACOND_BIN" run --config "$TBD_CONFIG" 2>&1 </dev/null) || rc=$?
[ "$rc" = 77 ] && echo "$out" | grep -q CAP_NET_ADMIN || tb_fail "with CAP_NET_RAW only: exit $rc: $out"

kill "$LISTENER" 2>/dev/null
tb_pass "as $user with only CAP_NET_RAW+CAP_NET_ADMIN: heard in ${ms} ms; READY/STATUS/WATCHDOG($pings in 4 s)/STOPPING; LED via group; no caps -> 77"

# init: systemd
# timeout: 240
# Issue 32 under the shipped units: changes from afar cross both sandboxes. The monitor
# (altbeacond-monitor.service, [mqtt] control = "beacon") may write only the daemon's requests
# directory; the daemon (altbeacond.service) replaces /etc/altbeacond/config.toml itself, the
# only place in /etc its unit may write. A change is heard on air and lands in the file, owned by
# the service's user; restart from afar restarts the service (systemd, not the process itself,
# starts the new one) and the beacon comes back with the changed config; nothing is refused by
# either sandbox; both units' exposure stays ≤ 2.0.
. "$TB_REPO/deploy/testbed/lib.sh"
journal() { journalctl -b -u altbeacond.service -u altbeacond-monitor.service --no-pager -o cat | tail -n "${1:-40}"; }
fail() { echo "--- journal:"; journal 60; tb_fail "$*"; }
wait_for() {  # SECONDS COMMAND...: until COMMAND succeeds
  local s=$1 i; shift
  for ((i = 0; i < s * 10; i++)); do "$@" && return 0; _tb_sleep 0.1; done
  return 1
}
hexp() { printf '0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002%s00' "$1"; }
wait_for 30 test "$(systemctl show -P ActiveState altbeacond.service)" = active || fail "altbeacond.service is not active"
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || fail "beacon not heard"
[ "$(stat -c '%a %U:%G' /etc/altbeacond)" = "775 root:altbeacond" ] || fail "/etc/altbeacond is $(stat -c '%a %U:%G' /etc/altbeacond)"
[ "$(stat -c '%a' /run/altbeacond/requests)" = 700 ] || fail "the requests directory: $(stat -c '%a %U' /run/altbeacond/requests)"

ip link set lo up
printf 'listener 1883 127.0.0.1\nallow_anonymous false\npassword_file /tmp/mosquitto.passwd\n' >/tmp/mosquitto.conf
: >/tmp/mosquitto.passwd
mosquitto_passwd -b /tmp/mosquitto.passwd mon s3cret || fail "mosquitto_passwd"
mosquitto -c /tmp/mosquitto.conf >/tmp/mosquitto.log 2>&1 &
install -m 0640 -g altbeacond /dev/null /etc/altbeacond/mqtt-password
printf 's3cret\n' >/etc/altbeacond/mqtt-password
printf '%s\n' '[monitor]' 'node = "walled"' '[mqtt]' 'host = "127.0.0.1"' 'username = "mon"' \
  'password_file = "/etc/altbeacond/mqtt-password"' 'control = "beacon"' >/etc/altbeacond/monitor.toml
systemctl start altbeacond-monitor.service || fail "systemctl start altbeacond-monitor failed"
wait_for 30 eval '[ "$(mosquitto_sub -u mon -P s3cret -t altbeacond/walled/status -C 1 -W 2 2>/dev/null)" = online ]' || fail "the monitor is not online"
_tb_sleep 1

t=$(tb_now_ms)
mosquitto_pub -u mon -P s3cret -t altbeacond/walled/beacon/set/power -m -40
ms=$(tb_wait_heard "$(hexp d8)" 5000 "$t") || fail "power -40 from afar not heard"
grep -q '^power = -40$' /etc/altbeacond/config.toml || { cat /etc/altbeacond/config.toml; fail "not written into config.toml"; }
owner=$(stat -c '%U' /etc/altbeacond/config.toml)
[ "$owner" = altbeacond ] || fail "config.toml replaced by $owner, not by the service"

pid=$(systemctl show -P MainPID altbeacond.service)
restarts=$(systemctl show -P NRestarts altbeacond.service)
mosquitto_pub -u mon -P s3cret -t altbeacond/walled/beacon/set/restart -m PRESS
wait_for 20 eval '[ "$(systemctl show -P NRestarts altbeacond.service)" -gt "$restarts" ]' || fail "restart from afar did not restart the service"
wait_for 20 eval '[ "$(systemctl show -P ActiveState altbeacond.service)" = active ]' || fail "altbeacond.service not active after the restart"
[ "$(systemctl show -P MainPID altbeacond.service)" != "$pid" ] || fail "the same process after restart"
tb_wait_heard "$(hexp d8)" 15000 >/dev/null || fail "the changed beacon not heard after the restart"
# The monitor's requests directory survived the daemon's restart (RuntimeDirectoryPreserve=yes).
mosquitto_pub -u mon -P s3cret -t altbeacond/walled/beacon/set/power -m -41
tb_wait_heard "$(hexp d7)" 5000 >/dev/null || fail "a change after the daemon's restart not heard"
journal 200 | grep -q "altbeacond.service: Failed" && fail "the restart from afar was taken for a failure"
journal 100 | grep -qi "permission denied\|read-only file system\|not permitted" && fail "something was refused by a sandbox"
exposure=""
for u in altbeacond.service altbeacond-monitor.service; do
  e=$(systemd-analyze security "$u" 2>/dev/null | awk '/Overall exposure level/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) print $i}')
  awk -v e="$e" 'BEGIN {exit !(e != "" && e <= 2.0)}' || fail "$u: exposure $e"
  exposure="$exposure $u=$e"
done
systemctl stop altbeacond-monitor.service
tb_pass "under both units: power from afar heard in ${ms} ms and written to config.toml by the service's user; restart from afar: systemd started a new process, the change kept; a change after it taken too; exposure:$exposure"

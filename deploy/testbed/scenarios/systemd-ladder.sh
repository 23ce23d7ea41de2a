# init: systemd
# timeout: 300
# SPEC §5, the escalation ladder's last step under the shipped unit and a real systemd: a
# controller wedged so hard that taking the adapter down and up does not cure it. The daemon
# re-arms, takes the adapter down and up, re-arms more, then stops pinging systemd's watchdog
# (STATUS= says so); systemd kills and restarts the service. Once the controller is cured the
# restarted daemon puts the beacon back on air. A drop-in shortens WatchdogSec to 10 s (as
# `systemctl edit altbeacond` would) so the scenario does not wait 30 s for it.
. "$TB_REPO/deploy/testbed/lib.sh"
CONF=/etc/altbeacond/config.toml
prop() { systemctl show -P "$1" altbeacond.service; }
journal() { journalctl -b -u altbeacond.service --no-pager -o cat | tail -n "${1:-40}"; }
fail() { echo "--- journal:"; journal 60; tb_fail "$*"; }
wait_for() {  # SECONDS COMMAND...: until COMMAND succeeds
  local s=$1 i; shift
  for ((i = 0; i < s * 10; i++)); do "$@" && return 0; _tb_sleep 0.1; done
  return 1
}
restarted() { local p; p=$(prop MainPID); [ "$p" != "$pid" ] && [ "$p" != 0 ]; }
status_has() { case "$(prop StatusText)" in *"$1"*) return 0 ;; esac; return 1; }

mkdir -p /etc/systemd/system/altbeacond.service.d
printf '[Service]\nWatchdogSec=10\n' >/etc/systemd/system/altbeacond.service.d/watchdog.conf
printf '\n[watchdog]\ncheck_interval_s = 1\n' >>"$CONF"
systemctl daemon-reload
systemctl restart altbeacond.service
wait_for 30 test "$(prop ActiveState)" = active || fail "not active after restart"
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || fail "beacon not heard"
pid=$(prop MainPID)
t0=$(tb_now_ms)
tb_fault_wedge_hard || fail "cannot wedge hci0"
wait_for 90 status_has "asked systemd to restart" || fail "STATUS= never reached the last step: $(prop StatusText)"
asked=$(($(tb_now_ms) - t0))
tb_log "STATUS=$(prop StatusText)"
journal 200 | grep -q "taking the adapter down and up" || fail "no down and up before the last step"
journal 200 | grep -q "no longer pinging systemd's watchdog" || fail "no word about the watchdog"
wait_for 40 restarted || fail "systemd did not restart the service"
restarted=$(($(tb_now_ms) - t0))
journalctl -b -u altbeacond.service --no-pager -o cat | grep -qi "watchdog timeout" || fail "no watchdog timeout in the journal"
tb_log "restarted by systemd (NRestarts=$(prop NRestarts)) ${restarted} ms after the wedge"
tb_fault_unwedge
back=$(tb_wait_heard "$TB_RIG_HEX" 40000 "$t0") || fail "beacon not back after the cure"
tb_pass "hard wedge: last step (STATUS=, watchdog pings stopped) after ${asked} ms, systemd restart after ${restarted} ms; on air again ${back} ms after the wedge, once cured"

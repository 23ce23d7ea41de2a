# init: systemd
# timeout: 300
# SPEC §5, the escalation ladder's last step under the shipped unit and a real systemd: a
# controller wedged so hard that taking the adapter down and up does not cure it. The daemon
# re-arms, takes the adapter down and up, re-arms more, then restarts at once: it takes the
# beacon off air and exits with status 70 (STATUS= says so first), and systemd starts it again
# after RestartSec (Restart=on-failure): no watchdog period off air, no SIGABRT core. Once the
# controller is cured the restarted daemon puts the beacon back on air. The watchdog drop-in
# (WatchdogSec=10) stays, to show the restart does not wait for it.
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
wait_for 90 status_has "restarting the service" || fail "STATUS= never reached the last step: $(prop StatusText)"
asked=$(($(tb_now_ms) - t0))
tb_log "STATUS=$(prop StatusText)"
journal 200 | grep -q "taking the adapter down and up" || fail "no down and up before the last step"
journal 200 | grep -q "exiting with status 70 so that systemd restarts the service now" || fail "no word about the restart"
wait_for 20 restarted || fail "systemd did not restart the service"
restarted=$(($(tb_now_ms) - t0))
since=$((restarted - asked))
journalctl -b -u altbeacond.service --no-pager -o cat | grep -qi "watchdog timeout" && fail "the restart waited for the watchdog"
[ "$since" -lt 8000 ] || fail "restart ${since} ms after the last step: expected about RestartSec (2 s)"
tb_log "restarted by systemd (NRestarts=$(prop NRestarts)) ${restarted} ms after the wedge"
tb_fault_unwedge
back=$(tb_wait_heard "$TB_RIG_HEX" 40000 "$t0") || fail "beacon not back after the cure"
tb_pass "hard wedge: last step (STATUS=, exit 70) after ${asked} ms, restarted by systemd ${since} ms later (${restarted} ms after the wedge); on air again ${back} ms after the wedge, once cured"

# timeout: 240
# SPEC §10, the beacon's own health, network-free: the JSON status file that `altbeacond health`
# reads (exit 0 on air, 1 degraded, 2 off air, 3 unknown) and the Prometheus text file of
# `[metrics] textfile`, served by Debian's node_exporter (textfile collector) and checked by
# promtool. Each state in turn: on air; a refused edit (degraded); the controller gone (off air);
# back; SIGTERM (no status file: unknown; the metrics say off air); SIGKILL (a file left by a
# dead pid: unknown).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
TF=/tmp/textfile
PROM=$TF/altbeacond.prom
STATUS=/run/altbeacond/status.json
mkdir -p "$TF"
ip link set lo up
tbd_config "[metrics]" "textfile = \"$PROM\""
# health_is N: `altbeacond health` exits N within 10 s (the outputs follow each change at once)
health_is() {
  local i rc
  for ((i = 0; i < 100; i++)); do
    "$ALTBEACOND_BIN" health >/tmp/health.txt; rc=$?
    [ "$rc" = "$1" ] && return 0
    _tb_sleep 0.1
  done
  echo "health exited $rc: $(cat /tmp/health.txt)"; tbd_dump; tb_fail "health did not exit $1 ($2)"
}
# scrape: node_exporter's view of the text file
scrape() { curl -sf http://127.0.0.1:9100/metrics; }
# metric NAME: its value in the text file as node_exporter serves it
metric() { scrape | awk -v m="$1" '$1 == m {print $2}'; }

tbd_start
health_is 0 "on air"
grep -q '^on-air: advertising 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6 major 1 minor 2 power -59 on hci0' /tmp/health.txt \
  || { cat /tmp/health.txt; tb_fail "health's line"; }
"$ALTBEACOND_BIN" health --json >/tmp/health.json
python3 -c 'import json,sys; d=json.load(open("/tmp/health.json")); s=d["status"]; assert d["exit"]==0 and d["health"]=="on-air" and s["state"]=="advertising" and s["frames"]==[{"frame":"altbeacon","on_air":True}], d' \
  || tb_fail "health --json is not what the status says"
[ "$(stat -c %a "$STATUS")" = 644 ] || tb_fail "the status file is not world-readable"
tb_promtool <"$PROM" >/tmp/promtool.txt 2>&1 || { cat /tmp/promtool.txt "$PROM"; tb_fail "promtool check metrics found problems"; }
/usr/bin/prometheus-node-exporter --web.listen-address=127.0.0.1:9100 --collector.disable-defaults --collector.textfile \
  --collector.textfile.directory="$TF" >/tmp/node-exporter.log 2>&1 &
for ((i = 0; i < 100; i++)); do scrape >/dev/null 2>&1 && break; _tb_sleep 0.1; done
[ "$(metric node_textfile_scrape_error)" = 0 ] || { scrape | grep -i textfile; cat /tmp/node-exporter.log; tb_fail "node_exporter could not read the text file"; }
[ "$(metric altbeacond_on_air)" = 1 ] || { cat "$PROM"; tb_fail "altbeacond_on_air is not 1 on air"; }
[ "$(metric 'altbeacond_frame_on_air{frame="altbeacon"}')" = 1 ] || { cat "$PROM"; tb_fail "the frame is not on air in the metrics"; }
scrape | grep -q '^altbeacond_build_info{version="' || tb_fail "no build_info"
now=$(date +%s); upd=$(printf '%.0f' "$(metric altbeacond_last_update_timestamp_seconds)")
# rewritten on every change and at least every 60 s (seen 10 s old under host load: no change since)
[ $((now - upd)) -le 65 ] || tb_fail "last update $upd, now $now"

# A refused edit: still on air, degraded.
sed -i 's/^major = .*/major = 70000/' "$TBD_CONFIG"
health_is 1 "refused edit"
[ "$(metric altbeacond_config_refused)" = 1 ] || tb_fail "altbeacond_config_refused is not 1"
[ "$(metric altbeacond_on_air)" = 1 ] || tb_fail "not on air with a refused edit"
sed -i 's/^major = .*/major = 1/' "$TBD_CONFIG"
health_is 0 "edit fixed"

# The controller gone: off air.
tb_fault_remove
health_is 2 "controller gone"
grep -q "^off-air: " /tmp/health.txt || tb_fail "health's line when off air: $(cat /tmp/health.txt)"
[ "$(metric altbeacond_on_air)" = 0 ] || tb_fail "altbeacond_on_air is not 0 with the controller gone"
tb_fault_return
health_is 0 "controller back"
tb_wait_heard "$TB_RIG_HEX" 5000 >/dev/null || tb_fail "not heard after the controller came back"
[ "$(metric 'altbeacond_rearms_total{cause="removed"}')" = 1 ] || { cat "$PROM"; tb_fail "the re-arm after removal is not counted"; }
tb_promtool <"$PROM" >/tmp/promtool.txt 2>&1 || { cat /tmp/promtool.txt "$PROM"; tb_fail "promtool check metrics found problems after faults"; }

# SIGTERM: no status file (unknown); the text file says off air.
tbd_finish
"$ALTBEACOND_BIN" health >/tmp/health.txt; rc=$?
[ "$rc" = 3 ] || tb_fail "health exited $rc after SIGTERM: $(cat /tmp/health.txt)"
[ ! -e "$STATUS" ] || tb_fail "the status file outlived the daemon"
[ "$(metric altbeacond_on_air)" = 0 ] || tb_fail "altbeacond_on_air is not 0 after SIGTERM"

# SIGKILL: the file is left, its pid is dead: unknown.
tbd_start
health_is 0 "started again"
kill -KILL "$TB_DAEMON_PID"; wait "$TB_DAEMON_PID" 2>/dev/null; TB_DAEMON_PID=""
"$ALTBEACOND_BIN" health >/tmp/health.txt; rc=$?
[ "$rc" = 3 ] && grep -q "is not running" /tmp/health.txt || tb_fail "health after SIGKILL exited $rc: $(cat /tmp/health.txt)"
tb_pass "health: 0 on air, 1 with a refused edit, 2 with the controller gone, 0 back, 3 after SIGTERM (no file) and after SIGKILL (dead pid); node_exporter served the text file (scrape error 0; on_air 1/1/0/1/0), promtool clean"

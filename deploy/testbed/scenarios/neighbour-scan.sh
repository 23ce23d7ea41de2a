# Another program scans with the beacon's own adapter (a Home Assistant Bluetooth proxy,
# bluetoothd, `altbeacond monitor` on the same adapter): the advertising reports its scan brings
# are dropped in the kernel by the advertiser's socket filter, so the beacon does not wake for
# them (issue 30). Prints the daemon's wakeups beside the reports hci0's scan received.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
# hci1 switches its advertising on and off 20 times a second: every scanner on the emulated
# radio gets a report each time. hci0 scans once (no re-arming: that would be commands to hci0,
# which the daemon's monitor rightly sees).
"$TB_TOOLS/advgen" -i hci1 --rate 20 --seconds 16 >/run/advgen.log 2>&1 &
advgen=$!
# Its log is kept out of /tmp, the config's directory: the daemon watches that one for edits.
scanlog=/run/neighbour-scan.log
TB_OBSERVER=hci0 tb_observe_bg "$scanlog" --poll 0 --scan legacy --timeout 14000
scan=$TB_OBSERVE_PID
_tb_sleep 2
r0=$(wc -l <"$scanlog") c0=$(tbd_ctxsw) t0=$(tb_now_ms)
_tb_sleep 10
r1=$(wc -l <"$scanlog") c1=$(tbd_ctxsw) t1=$(tb_now_ms)
kill "$scan" "$advgen" 2>/dev/null
wait "$scan" "$advgen" 2>/dev/null
reports=$((r1 - r0)) wakeups=$((c1 - c0))
tb_log "over $((t1 - t0)) ms: hci0's scan received $reports reports; the daemon woke $wakeups times"
[ "$reports" -ge 50 ] || { cat /run/advgen.log; tb_fail "hci0's scan received only $reports reports: no load to filter"; }
# Idle, the daemon wakes about once a second (the probe, docs/benchmarks.md); each report let
# through would be a wakeup of its own.
[ "$wakeups" -lt $((reports / 4)) ] || { tbd_dump; tb_fail "the daemon woke $wakeups times for $reports reports on its adapter"; }
tbd_alive
tb_observe --until-hex "$TB_RIG_HEX" --timeout 3000 --quiet >/dev/null || { tbd_dump; tb_fail "beacon not heard after the scan"; }
tbd_finish
tb_pass "another program's scan on the beacon's adapter: $reports reports in $((t1 - t0)) ms, the daemon woke $wakeups times"

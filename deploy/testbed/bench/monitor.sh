# The monitor's benchmark (SPEC §10, docs/benchmarks.md), run in one testbed VM by deploy/bench:
# `altbeacond monitor` on hci1 expecting BEACONS beacons while tools/advgen on hci0 sets new
# advertising data RATE times a second (each set is one report to every scanner on the emulated
# radio), for SECONDS; btmon decodes the same HCI traffic of hci1 meanwhile. Then
# `hcitool lescan --passive --duplicates` alone with the same load. CPU from /proc/PID/stat
# (utime + stime) over the window, as % of one (emulated) core; memory from /proc/PID/status.
# Prints "BENCH <key> <value...>" lines, then "BENCH done".
. "$TB_REPO/deploy/testbed/lib.sh"
RATE=${TB_BENCH_MON_RATE:-500} BEACONS=${TB_BENCH_MON_BEACONS:-20} SECONDS_=${TB_BENCH_MON_SECONDS:-20}
hz=$(getconf CLK_TCK)
ticks() { tb_cpu_ticks "$1"; }
pct() { awk -v a="$1" -v b="$2" -v hz="$hz" -v s="$3" 'BEGIN { printf "%.1f", (b - a) * 100 / hz / s }'; }
{
  printf '[monitor]\nadapter = "hci1"\nsilent_after_s = 60\nnode = "bench"\n[metrics]\ntextfile = "/tmp/m.prom"\n'
  for ((i = 1; i <= BEACONS; i++)); do
    printf '[expect.b%d]\ntype = "altbeacon"\nuuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"\nmajor = %d\nminor = 2\n' "$i" "$i"
  done
} >/tmp/monitor.toml
"$ALTBEACOND_BIN" monitor --config /tmp/monitor.toml >/tmp/monitor.log 2>&1 </dev/null &
mon=$!
for ((i = 0; i < 100; i++)); do grep -q "scanning on" /tmp/monitor.log && break; _tb_sleep 0.1; done
grep -q "scanning on" /tmp/monitor.log || { cat /tmp/monitor.log; echo "BENCH failed monitor did not scan"; exit 1; }
btmon -i hci1 >/dev/null 2>&1 &
btm=$!
sleep 1
adverts() { awk '$1 == "altbeacond_scan_adverts_total" {print $2}' /tmp/m.prom; }
kill -0 "$mon"
m0=$(ticks "$mon") b0=$(ticks "$btm") t0=$(tb_now_ms)
"$TB_TOOLS/advgen" -i hci0 --rate "$RATE" --beacons "$BEACONS" --seconds "$SECONDS_" >/tmp/advgen.txt || { echo "BENCH failed advgen"; exit 1; }
m1=$(ticks "$mon") b1=$(ticks "$btm") t1=$(tb_now_ms)
s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
sleep 1
heard=$(grep -c "heard" /tmp/monitor.log)
rss=$(tb_smaps_kb "$mon" Rss) hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$mon/status")
echo "BENCH advgen $(cat /tmp/advgen.txt)"
echo "BENCH monitor_cpu_pct $(pct "$m0" "$m1" "$s")"
echo "BENCH btmon_cpu_pct $(pct "$b0" "$b1" "$s")"
# the reports the monitor counted (its text file is rewritten at each change; read the last)
kill "$mon"; wait "$mon"
echo "BENCH monitor_adverts $(adverts) $s"
echo "BENCH monitor_beacons_heard $heard $BEACONS"
echo "BENCH monitor_rss_kb $rss $hwm"
kill "$btm" 2>/dev/null; wait "$btm" 2>/dev/null
hcitool -i hci1 lescan --passive --duplicates >/dev/null 2>&1 &
hc=$!
sleep 1
h0=$(ticks "$hc") t0=$(tb_now_ms)
"$TB_TOOLS/advgen" -i hci0 --rate "$RATE" --beacons "$BEACONS" --seconds "$SECONDS_" >/tmp/advgen2.txt
h1=$(ticks "$hc") t1=$(tb_now_ms)
s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
echo "BENCH lescan_cpu_pct $(pct "$h0" "$h1" "$s")"
kill -INT "$hc"; wait "$hc" 2>/dev/null
echo "BENCH done"

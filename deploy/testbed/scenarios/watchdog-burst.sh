# timeout: 600
# SPEC §5 "bursts of the above": dozens of resets, downs, foreign disables and controller removals
# in a row. The daemon stays up, ends on air, and leaks neither descriptors nor memory (anonymous
# resident memory); retries
# back off (its CPU time over the burst is printed).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)"
tbd_start
sleep 1
fd0=$(tbd_fd_count) rss0=$(tbd_rss_kb) anon0=$(tbd_anon_kb)
cpu() { tb_cpu_ticks "$TB_DAEMON_PID"; }
cpu0=$(cpu)
for i in $(seq 10); do
  tb_fault_reset >/dev/null 2>&1
  tb_fault_down >/dev/null 2>&1
  tb_fault_adv_disable >/dev/null 2>&1
  tb_fault_adv_overwrite >/dev/null 2>&1
done
tbd_alive
for i in $(seq 6); do
  tb_fault_remove >/dev/null 2>&1
  sleep 0.3
  tb_fault_return >/dev/null 2>&1 || tb_fail "btvirt did not come back"
done
tbd_alive
tb_wait_heard "$TB_RIG_HEX" 15000 >/dev/null || { tbd_dump; tb_fail "not on air after the burst"; }
sleep 2
fd1=$(tbd_fd_count) rss1=$(tbd_rss_kb) anon1=$(tbd_anon_kb) cpu1=$(cpu)
grep -c "back on air" /tmp/altbeacond.log | sed 's/^/re-arms logged: /'
grep "back on air" /tmp/altbeacond.log | tail -1
tb_log "descriptors before ${fd0}, after ${fd1}; RSS before ${rss0} KiB, after ${rss1} KiB (anonymous ${anon0} -> ${anon1} KiB); CPU over the burst $((cpu1 - cpu0)) ticks"
[ "$fd1" -le "$fd0" ] || { ls -l "/proc/$TB_DAEMON_PID/fd"; tb_fail "descriptors grew from $fd0 to $fd1"; }
# a leak grows anonymous memory (smaps_rollup's Anonymous: exact, unlike RssAnon); code pages of
# the static binary read in by the burst's recovery paths are file-backed and are not a leak
[ "$anon1" -le $((anon0 + 512)) ] || tb_fail "anonymous memory grew from $anon0 to $anon1 KiB"
tbd_finish
tb_pass "burst of 40 faults and 6 removals: on air after it; fds ${fd0}->${fd1}, anonymous memory ${anon0}->${anon1} KiB (RSS ${rss0}->${rss1})"

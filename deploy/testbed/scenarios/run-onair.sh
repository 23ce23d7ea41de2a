# altbeacond run puts the SPEC §3 beacon on air (LE-only controller) with the exact payload;
# SIGTERM takes it off air and the daemon exits 0.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config
tbd_start
tb_log "heard on hci1 ${TBD_START_MS} ms after process start"
# its executable is mapped with read-around off (MADV_RANDOM: VmFlags "rr"), which keeps the
# binary's untouched pages out of its resident memory (docs/benchmarks.md)
exe=$(readlink "/proc/$TB_DAEMON_PID/exe")
flags=$(awk -v exe="$exe" '$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ {mine = ($6 == exe)} mine && $1 == "VmFlags:" {print ($0 ~ / rr/) ? "rr" : "normal"}' "/proc/$TB_DAEMON_PID/smaps" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
tb_log "mappings of $exe by read advice: $flags"
case "$flags" in *rr*) ;; *) tb_fail "no mapping of $exe advised MADV_RANDOM: $flags" ;; esac
case "$flags" in *normal*) tb_fail "a mapping of $exe kept read-around: $flags" ;; esac
tbd_finish
grep -q "SIGTERM: taking the beacon off air" /tmp/altbeacond.log || { tbd_dump; tb_fail "no SIGTERM handling logged"; }
tbd_assert_off_air
tb_pass "on air in ${TBD_START_MS} ms; off air after SIGTERM"

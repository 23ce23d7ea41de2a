# A 20 ms interval on the LE-only controller: accepted or refused with a fallback the log names;
# either way the beacon is on air with the exact payload.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "[bluetooth]" "interval_ms = 20"
tbd_start; ms=$TBD_START_MS
n=$(tb_observe --hex "$TB_RIG_HEX" --timeout 1000 | grep -c .)
grep -E "on air|refused" /tmp/altbeacond.log
tbd_finish
tb_pass "interval 20 ms: on air in ${ms} ms; ${n} reports heard in 1 s"

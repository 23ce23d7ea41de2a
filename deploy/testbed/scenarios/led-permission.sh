# No access to the GPIO chip (unprivileged service, /dev/gpiochipN root-only): the daemon logs
# "permission denied on /dev/gpiochipN" once and the beacon still goes on air (SPEC §4).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
chmod 600 "$TB_GPIOCHIP"
tbd_config "[leds]" "chip = \"${TB_GPIOCHIP#/dev/}\"" 'status = "GPIO17"'
chmod 644 "$TBD_CONFIG"
t0=$(tb_now_ms)
# setpriv directly (not the tb_as_nobody function) so the pid is the daemon's, for SIGTERM
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+net_raw,+net_admin \
  --ambient-caps=+net_raw,+net_admin -- "$ALTBEACOND_BIN" run --config "$TBD_CONFIG" >>/tmp/altbeacond.log 2>&1 </dev/null &
TB_DAEMON_PID=$!
ms=$(tb_wait_heard "$TB_RIG_HEX" 15000 "$t0") || { tbd_dump; tb_fail "beacon not heard without GPIO access"; }
tbd_wait_log "permission denied on $TB_GPIOCHIP" 5 || { tbd_dump; tb_fail "no permission-denied message naming $TB_GPIOCHIP"; }
n=$(grep -c "permission denied" /tmp/altbeacond.log)
[ "$n" = 1 ] || { tbd_dump; tb_fail "permission denied logged $n times"; }
[ -z "$(tb_gpio_consumer 17)" ] || tb_fail "line 17 held although the chip was not accessible"
tbd_alive
tbd_finish
grep "LED" /tmp/altbeacond.log
tb_pass "permission denied on $TB_GPIOCHIP logged once; on air in ${ms} ms"

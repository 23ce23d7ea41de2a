# No adapter at start: the daemon waits (fault LED), says so, and advertises once hci0 appears.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tb_btvirt_stop
tbd_config "$(tbd_leds)"
tb_daemon_start run --config "$TBD_CONFIG"
tbd_wait_log "adapter missing" 10 || { tbd_dump; tb_fail "missing adapter not reported"; }
led=$(tb_gpio_sample 27 600); [ "$led" = on ] || { tbd_dump; tb_fail "fault LED is '$led' with no adapter, expected on"; }
sleep 2
tbd_alive
tb_fault_return
t=$(tb_now_ms)
ms=$(tb_wait_heard "$TB_RIG_HEX" 10000 "$t") || { tbd_dump; tb_fail "beacon not heard after hci0 appeared"; }
led=$(tb_gpio_sample 17 400); [ "$led" = on ] || tb_fail "status LED is '$led' while advertising, expected on"
tbd_finish
tb_pass "waited for the adapter; heard ${ms} ms after hci0 appeared"

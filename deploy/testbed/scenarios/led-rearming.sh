# SPEC §4 "re-arming after a fault": while another process keeps disabling advertising, the daemon
# holds back its re-arms (storm back-off) and the status LED blinks fast (about 5 Hz), fault off.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)"
tbd_start >/dev/null
s=$(tb_gpio_sample 17 800); [ "$s" = on ] || { tbd_dump; tb_fail "status LED '$s' while advertising"; }

( end=$(($(tb_now_ms) + 6000))
  while [ "$(tb_now_ms)" -lt "$end" ]; do tb_fault_adv_disable >/dev/null; sleep 0.1; done ) &
storm=$!
sleep 2
st=$(tb_gpio_sample 17 2500) f=$(tb_gpio_sample 27 1000)
wait $storm
tb_log "during the storm: status '$st', fault '$f'"
echo "$st" | awk '$1 == "blink" && $2 >= 2.5 && $2 <= 7 {ok = 1} END {exit !ok}' \
  || { tbd_dump; tb_fail "status LED '$st' while re-arming, expected a fast blink"; }
[ "$f" = off ] || { tbd_dump; tb_fail "fault LED '$f' while re-arming, expected off"; }
tb_wait_heard "$TB_RIG_HEX" 5000 >/dev/null || { tbd_dump; tb_fail "beacon not back after the storm"; }
sleep 1.5
s=$(tb_gpio_sample 17 1000); [ "$s" = on ] || { tbd_dump; tb_fail "status LED '$s' after the storm"; }
tbd_finish
tb_pass "re-arming: status LED blinked ($st), fault LED off; steady again after"

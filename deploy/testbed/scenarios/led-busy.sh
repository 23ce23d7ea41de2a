# An LED that cannot be had does not stop the beacon (SPEC §4): the status line is held by gpioset
# before start. The daemon logs it once, naming chip and line, goes on air, drives the fault LED
# it did get, and retries when [leds] changes (bad offset, unknown name, then a free line).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"

tb_hold_line 17 || tb_fail "could not hold line 17"
tbd_config "$(tbd_leds)"
tbd_start
tbd_wait_log "status LED unavailable.*GPIO17.*pinctrl-bcm2711.*busy" 5 \
  || { tbd_dump; tb_fail "busy status line not logged with chip and line"; }
[ "$(tb_gpio_consumer 17)" = gpioset ] || { tbd_dump; tb_fail "line 17 taken from gpioset"; }
[ "$(tb_gpio_consumer 27)" = altbeacond ] || { tbd_dump; tb_fail "fault LED not held"; }
s=$(tb_gpio_sample 27 1000); [ "$s" = off ] || { tbd_dump; tb_fail "fault LED '$s' while advertising"; }
tb_log "status line busy (held by gpioset), beacon on air, fault LED held and dark"

leds() { printf '%s\n' "[leds]" 'chip = "pinctrl-bcm2711"' "status = $1"; }
tbd_config "$(leds 40)"
tbd_wait_log "offset 40 out of range (chip has 28 lines)" 5 || { tbd_dump; tb_fail "offset 40 not reported"; }
tbd_config "$(leds '"GPIO99"')"
tbd_wait_log "no line named GPIO99" 5 || { tbd_dump; tb_fail "GPIO99 not reported"; }
tbd_config "[leds]" 'chip = "gpiochip9"' 'status = 5'
tbd_wait_log 'GPIO chip "gpiochip9".*no GPIO chip' 5 || { tbd_dump; tb_fail "missing chip not reported"; }
[ -z "$(tb_gpio_consumer 27)" ] || { tbd_dump; tb_fail "fault line kept after it left the config"; }

tb_release_line 17
tbd_config "$(leds '"GPIO17"')"
tbd_wait_log "LEDs: status on line 17" 5 || { tbd_dump; tb_fail "line 17 not taken once free"; }
s=$(tb_gpio_sample 17 1000); [ "$s" = on ] || { tbd_dump; tb_fail "status LED '$s' after retry, expected on"; }
n=$(grep -c "busy" /tmp/altbeacond.log)
[ "$n" = 1 ] || { tbd_dump; tb_fail "busy line logged $n times, expected once"; }
tb_wait_heard "$TB_RIG_HEX" 3000 >/dev/null || { tbd_dump; tb_fail "beacon off air"; }
tbd_alive
tbd_finish
grep -E "LED|GPIO" /tmp/altbeacond.log
tb_pass "busy, out-of-range, unknown-name and missing-chip LEDs logged; beacon stayed on air"

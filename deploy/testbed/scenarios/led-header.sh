# SPEC §11 and issue 23: LEDs with no leds.chip go on the Pi's header chip (found by label), and
# lines are named as Debian's device tree names them: "GPIO4" does not exist there (line 4 is
# GPIO_GCLK), so the daemon says which offset to give, keeps the beacon and the other LED, and
# takes the line once the edit gives the offset.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"

tbd_config "[leds]" 'status = "GPIO4"' "fault = 27"
"$ALTBEACOND_BIN" check --config "$TBD_CONFIG" >/tmp/check.txt 2>&1 || { cat /tmp/check.txt; tb_fail "check refused a [leds] table without chip"; }
grep -q "chip: *the 40-pin header's (pinctrl-bcm2711, pinctrl-bcm2835, pinctrl-rp1)" /tmp/check.txt \
  || { cat /tmp/check.txt; tb_fail "check does not say which chip"; }
tbd_start
hint='line 4 of pinctrl-bcm2711 is named "GPIO_GCLK": give its offset, 4'
tbd_wait_log "no line named GPIO4; $hint" 5 || { tbd_dump; tb_fail "no hint for GPIO4"; }
[ "$(tb_gpio_consumer 27)" = altbeacond ] || { tbd_dump; tb_fail "fault line 27 not held (consumer '$(tb_gpio_consumer 27)')"; }
[ -z "$(tb_gpio_consumer 4)" ] || { tbd_dump; tb_fail "line 4 held though the name was wrong"; }
tb_log "no chip, status \"GPIO4\": refused with the hint; fault held on the header chip; beacon on air"

tbd_config "[leds]" "status = 4" "fault = 27"
tbd_wait_log "LEDs: status on line 4, fault on line 27 of $TB_GPIOCHIP (pinctrl-bcm2711)" 10 || { tbd_dump; tb_fail "the offset was not taken"; }
[ "$(tb_gpio_consumer 4)" = altbeacond ] || { tbd_dump; tb_fail "line 4 not held after the edit"; }
tb_wait_heard "$TB_RIG_HEX" 3000 >/dev/null || { tbd_dump; tb_fail "beacon off air after the LED edit"; }
[ "$(grep -c "no line named GPIO4" /tmp/altbeacond.log)" = 1 ] || { tbd_dump; tb_fail "the hint was logged more than once"; }
tbd_finish
tb_pass "LEDs on the header chip by label with no leds.chip; \"GPIO4\" answered with \"$hint\" (once); offset 4 then held; beacon on air throughout"

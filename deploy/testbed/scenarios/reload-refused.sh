# SPEC §6 and §4: a bad edit keeps the last good beacon on air, logs FILE:LINE:COL and blinks the
# fault LED (1 Hz); a fix clears it; a deleted file keeps the beacon and is picked up again when
# it comes back; an LED config change is applied (lines released and requested again).
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
tbd_config "$(tbd_leds)"
tbd_start
sed -i 's/^major = .*/major = 70000/' "$TBD_CONFIG"
tbd_wait_log "c.toml:3:9" 5 || { tbd_dump; tb_fail "refused edit not logged as FILE:LINE:COL"; }
tb_wait_heard "$TB_RIG_HEX" 3000 >/dev/null || { tbd_dump; tb_fail "old beacon not on air after a refused edit"; }
led=$(tb_gpio_sample 27 2100)
case "$led" in blink*) ;; *) tbd_dump; tb_fail "fault LED is '$led' after a refused edit, expected a 1 Hz blink";; esac
st=$(tb_gpio_sample 17 600); [ "$st" = on ] || tb_fail "status LED is '$st' after a refused edit, expected on"
sed -i 's/^major = .*/major = 5/' "$TBD_CONFIG"
hex5=0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600050002c500
tb_wait_heard "$hex5" 5000 >/dev/null || { tbd_dump; tb_fail "fixed edit not heard"; }
sleep 0.3
led=$(tb_gpio_sample 27 1200); [ "$led" = off ] || tb_fail "fault LED is '$led' after the fix, expected off"
cp "$TBD_CONFIG" /tmp/saved.toml
rm "$TBD_CONFIG"
tbd_wait_log "cannot read config" 5 || { tbd_dump; tb_fail "deleted config not reported"; }
tb_wait_heard "$hex5" 3000 >/dev/null || { tbd_dump; tb_fail "beacon lost after the config was deleted"; }
led=$(tb_gpio_sample 27 2100); case "$led" in blink*) ;; *) tb_fail "fault LED is '$led' with the config deleted, expected blinking";; esac
sed 's/^major = .*/major = 6/' /tmp/saved.toml >"$TBD_CONFIG"
hex6=0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600060002c500
tb_wait_heard "$hex6" 5000 >/dev/null || { tbd_dump; tb_fail "restored config not picked up"; }
# LED change: the status LED moves from GPIO17 to GPIO22
sed -i 's/^status = .*/status = "GPIO22"/' "$TBD_CONFIG"
sleep 1.5
[ -z "$(tb_gpio_consumer 17)" ] || tb_fail "GPIO17 still held after the LED moved"
[ "$(tb_gpio_consumer 22)" = altbeacond ] || { tbd_dump; tb_fail "GPIO22 not held by altbeacond after the LED moved"; }
st=$(tb_gpio_sample 22 600); [ "$st" = on ] || tb_fail "new status LED is '$st', expected on"
tbd_alive
tbd_finish
tb_pass "refused edit kept the beacon and blinked the fault LED; fix, delete/restore and LED move applied"

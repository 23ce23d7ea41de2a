# The newcomer's demo (deploy/run without Bluetooth hardware): the beacon from config.toml goes on
# air on hci0, an observer on hci1 hears it, `altbeacond scan` lists it, and the LEDs are read.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
sed -e 's/^# \[leds\]/[leds]/' -e 's/^# chip = "gpiochip0".*/chip = "pinctrl-bcm2711"/' \
    -e 's/^# status = 17 .*/status = 17/' -e 's/^# fault = 27 .*/fault = 27/' \
    "${DEMO_CONFIG:-$TB_REPO/config.toml}" >"$TBD_CONFIG"
echo "== altbeacond check"
"$ALTBEACOND_BIN" check --config "$TBD_CONFIG" || tb_fail "the config does not validate"
hex=$("$ALTBEACOND_BIN" check --config "$TBD_CONFIG" | sed -n 's/^advertising-data: //p')
echo "== altbeacond run (hci0), in the background"
tbd_start "$hex"
echo "heard on hci1 ${TBD_START_MS} ms after the daemon started:"
tb_observe --hex "$hex" --count 3 --timeout 3000
echo "== altbeacond scan --adapter hci1 --timeout 4 (piped: one line per change)"
"$ALTBEACOND_BIN" scan --adapter hci1 --timeout 4 | cat
echo "== LEDs (gpio-sim chip pinctrl-bcm2711): status GPIO17 $(tb_gpio_sample 17 600), fault GPIO27 $(tb_gpio_sample 27 600)"
echo "== a controller reset by another process (hciconfig hci0 reset)"
t=$(tb_now_ms); tb_fault_reset
# hciconfig's reset is a down and an up: the daemon names whichever it saw first.
tbd_recovered "$t" "back on air after"
echo "back on air: heard again ${TBD_BACK} ms after the reset"
echo "== daemon log"
tbd_finish
cat /tmp/altbeacond.log
tb_pass "demo done"

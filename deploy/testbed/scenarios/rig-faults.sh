#!/bin/bash
# rig-faults: proves the fault helpers of lib.sh (SPEC §5) do what they say, without altbeacond:
# each one, applied to the study guide's beacon on hci0, takes it off air (the study-guide setup
# never recovers, SPEC §7), and the controller is usable again afterwards. Also the LED sampler
# classifies steady, fast-blinking, short-off-blink and short-flash lines, and a busy line shows
# its holder.
# timeout: 480
# shellcheck source=../lib.sh
. "$TB_REPO/deploy/testbed/lib.sh"
hex=$TB_RIG_HEX

on_air() {  # (re)starts the study-guide beacon and waits until it is heard
  hciconfig hci0 up 2>/dev/null && _tb_hcicmd hci0 0x08 0x000a 00 >/dev/null  # clean slate
  tb_studyguide_start hci0 >/dev/null || tb_fail "study guide refused before '$1'"
  tb_wait_heard "$hex" 5000 >/dev/null || tb_fail "beacon not heard before '$1'"
}
gone() {  # the beacon is off air within 3 s after fault $1
  tb_wait_silent 1000 5000 "$hex" >/dev/null || tb_fail "beacon still heard after '$1'"
  tb_log "'$1' took the study-guide beacon off air"
}

on_air reset;     tb_fault_reset;   gone "tb_fault_reset"
on_air down;      tb_fault_down
  hciconfig hci0 | grep -q DOWN || tb_fail "hci0 not down"
  # the ioctl path does not reset the controller: the emulated radio keeps advertising while
  # hci0 is down; bringing it up again (HCI Reset in the init sequence) ends it
  if tb_wait_heard "$hex" 1500 >/dev/null; then tb_log "still heard while hci0 is down"; fi
  hciconfig hci0 up
  gone "tb_fault_down + hciconfig hci0 up"
on_air disable;   tb_fault_adv_disable; gone "tb_fault_adv_disable"
on_air overwrite; tb_fault_adv_overwrite
  tb_wait_heard 0201060909696e747275646572 3000 >/dev/null || tb_fail "intruder data not heard"
  gone "tb_fault_adv_overwrite"
on_air rfkill;    tb_fault_rfkill_block
  tb_log "rfkill: $(rfkill list "$(tb_rfkill_id hci0)" | tr '\n\t' '  ')"
  hciconfig hci0 | grep -q DOWN || tb_fail "hci0 not down after rfkill block"
  hciconfig hci0 up 2>/dev/null && tb_fail "hci0 came up while blocked"
  # like tb_fault_down: the kernel closes hci0 without a reset, the emulated radio goes on
  if tb_wait_heard "$hex" 1500 >/dev/null; then tb_log "still heard while hci0 is blocked"; fi
  tb_fault_rfkill_unblock
  hciconfig hci0 up || tb_fail "hci0 does not come up after unblock"
  gone "tb_fault_rfkill_block + unblock + up"
on_air hang;      tb_fault_hang
  t0=$(tb_now_ms); timeout 4 hcitool -i hci0 cmd 0x03 0x0003 >/dev/null 2>&1; t1=$(tb_now_ms)
  tb_log "hcitool HCI Reset while hung: no answer, given up after $((t1 - t0)) ms; dmesg: $(dmesg | grep -i timeout | tail -1)"
  tb_fault_unhang
  tb_wait_hci hci0 5 || tb_fail "hci0 gone after unhang"
  tb_log "after unhang: $(hciconfig hci0 | grep -o 'UP RUNNING\|DOWN')"
on_air remove;    tb_fault_remove
  [ ! -e /sys/class/bluetooth/hci0 ] || tb_fail "hci0 still present after tb_fault_remove"
  tb_fault_return || tb_fail "controllers did not come back"
  tb_log "after return: $(ls /sys/class/bluetooth | tr '\n' ' ') $(hciconfig hci0 | grep -o 'UP RUNNING\|DOWN')"
  tb_assert_silent 1000 "$hex"
  tb_log "'tb_fault_remove/return' leaves the beacon off air"
on_air bluetoothd; tb_bluetoothd_start || tb_fail "bluetoothd did not start"
  # starting it finds hci0 already up and leaves it be; stopping powers it off (mgmt)
  if tb_wait_heard "$hex" 1500 >/dev/null; then tb_log "still heard after bluetoothd started"; fi
  on_air "bluetoothd restart"; tb_bluetoothd_restart || tb_fail "bluetoothd restart"
  gone "tb_bluetoothd_restart"
  tb_log "after bluetoothd restart: $(hciconfig hci0 | grep -o 'UP RUNNING\|DOWN')"
  tb_bluetoothd_stop

# LEDs: a driver loop with gpioset in time mode makes the patterns; each exec costs 50-300 ms in
# the emulated guest, so the pattern is only roughly what is asked: check the sampler's verdicts
# are blinks with a high and a low duty cycle respectively
blink() {  # line high_ms low_ms cycles
  local i
  for ((i = 0; i < $4; i++)); do
    tb_gpioset_for "$1" 1 "$2"
    tb_gpioset_for "$1" 0 "$3"
  done
}
tb_log "sampler, steady high: $(tb_gpioset_for 4 1 2000 & _tb_sleep 0.3; tb_gpio_sample 4 1000)"
blink 5 800 200 6 & bp=$!
r=$(tb_gpio_sample 5 4000); wait $bp
tb_log "sampler, 800 ms on / 200 ms off: $r"
set -- $r; [ "$1" = blink ] && [ "$3" -ge 40 ] || tb_fail "long-on pattern sampled as '$r'"
blink 6 200 1800 3 & bp=$!
r=$(tb_gpio_sample 6 5000); wait $bp
tb_log "sampler, 200 ms flash every 2 s: $r"
set -- $r; [ "$1" = blink ] && [ "$3" -le 25 ] || tb_fail "short-flash pattern sampled as '$r'"
tb_hold_line 22 || tb_fail "tb_hold_line"
tb_log "busy line GPIO22 held by '$(tb_gpio_consumer 22)'"
tb_release_line 22
[ -z "$(tb_gpio_consumer 22)" ] || tb_fail "GPIO22 still held"
tb_pass "fault helpers, LED sampler and busy line work"

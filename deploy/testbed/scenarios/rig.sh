#!/bin/bash
# rig: proves the testbed itself, without altbeacond. The study guide's hcitool sequence on hci0
# is heard on hci1 with the exact AltBeacon payload of SPEC §3, and goes silent when disabled;
# raw HCI works as nobody with CAP_NET_RAW + CAP_NET_ADMIN only; a gpio-sim line set by gpioset
# reads back and shows its consumer. Done with the LE-only flavour, then again after restarting
# btvirt as Bluetooth 5.0 controllers (bt5).
# shellcheck source=../lib.sh
. "$TB_REPO/deploy/testbed/lib.sh"

air() {  # the study guide on hci0, heard on hci1
  local fl=$1 t0 ms
  t0=$(tb_now_ms)
  tb_studyguide_start hci0 || tb_fail "[$fl] study-guide sequence refused"
  tb_log "[$fl] $(hciconfig hci0 version | grep -o 'HCI Version: [^ ]* *[^ ]*')"
  ms=$(tb_wait_heard "$TB_RIG_HEX" 5000 "$t0") || tb_fail "[$fl] beacon not heard on hci1"
  tb_log "[$fl] heard $TB_RIG_HEX ${ms} ms after the first hcitool"
  tb_observe --timeout 350 | sed "s/^/[$fl] observer: /"
  tb_as_nobody "$TB_TOOLS/observe" -i hci1 --until-hex "$TB_RIG_HEX" --timeout 3000 --quiet >/dev/null \
    || tb_fail "[$fl] raw HCI as nobody with CAP_NET_RAW,CAP_NET_ADMIN failed"
  if setpriv --reuid=nobody --regid=nogroup --clear-groups "$TB_TOOLS/observe" --timeout 100 2>/dev/null; then
    tb_fail "[$fl] raw HCI worked as nobody without capabilities"
  fi
  tb_log "[$fl] observer works as nobody with CAP_NET_RAW+CAP_NET_ADMIN, refused without"
  [ "$(_tb_hcicmd hci0 0x08 0x000a 00)" = 00 ] || tb_fail "[$fl] advertise disable refused"
  tb_assert_silent 1000 "$TB_RIG_HEX"
  tb_log "[$fl] silent after LE Set Advertise Enable 0"
}

gpio() {
  local pid i
  [ "$(tb_gpio_level 17)" = 0 ] || tb_fail "GPIO17 not low at start"
  tb_gpioset_hold 17 1
  pid=$TB_GPIOSET_PID
  for ((i = 0; i < 100; i++)); do [ "$(tb_gpio_level 17)" = 1 ] && break; _tb_sleep 0.02; done
  [ "$(tb_gpio_level 17)" = 1 ] || tb_fail "GPIO17 set by gpioset does not read back 1"
  [ "$(tb_gpio_consumer 17)" = gpioset ] || tb_fail "consumer of GPIO17 is '$(tb_gpio_consumer 17)'"
  [ "$(tb_gpio_sample 17 300)" = on ] || tb_fail "GPIO17 does not sample as on"
  kill $pid
  wait $pid 2>/dev/null
  [ "$(tb_gpio_level 17)" = 0 ] || tb_fail "GPIO17 not back to 0 (pull-down) after release"
  [ -z "$(tb_gpio_consumer 17)" ] || tb_fail "GPIO17 still held after gpioset ended"
  tb_log "gpio: GPIO17 set by gpioset reads back 1 (consumer gpioset, samples 'on'), released after"
}

tb_log "hci: $(ls /sys/class/bluetooth | tr '\n' ' ') rfkill: $(cat /sys/class/rfkill/*/name | tr '\n' ' ')"
gpio
air le
tb_btvirt_stop || tb_fail "btvirt stop"
tb_btvirt_start bt5 || tb_fail "btvirt bt5 did not give hci0 and hci1"
tb_log "after restart as bt5: hci: $(ls /sys/class/bluetooth | tr '\n' ' ') rfkill: $(for f in /sys/class/rfkill/*; do printf '%s=%s ' "${f##*/}" "$(cat "$f/name")"; done)"
air bt5
tb_pass "rig works (le and bt5)"

#!/bin/sh
# Shared by the image's boot probes (deploy/image/test-image): ABTEST lines on the console.
exec >/dev/console 2>&1
say() { echo "ABTEST $*"; }
boot=/boot/firmware
# wait_active [S]: until altbeacond is active with a status file (default 240 s)
wait_active() {
  i=0
  while [ $i -lt "${1:-240}" ]; do
    [ "$(systemctl is-active altbeacond)" = active ] && [ -s /run/altbeacond/status.json ] && break
    i=$((i + 1)); sleep 1
  done
  sleep 3
  say "${2:-}waited=$i"
}
# state PREFIX: what the host checks after each step
state() {
  say "$1active=$(systemctl is-active altbeacond)"
  say "$1show=$(systemctl show -p ActiveState -p SubState -p NRestarts -p ExecMainStatus altbeacond | tr '\n' ' ')"
  say "$1statustext=$(systemctl show -p StatusText --value altbeacond)"
  say "$1statusjson=$(tr '\n' ' ' </run/altbeacond/status.json 2>/dev/null | cut -c1-400)"
  say "$1config=$(grep -E '^(uuid|major|minor)' /etc/altbeacond/config.toml | tr -d ' "' | tr '\n' ' ')"
  say "$1lastgood=$(grep -E '^(uuid|major|minor)' /var/lib/altbeacond/last-good.toml 2>/dev/null | tr -d ' "' | tr '\n' ' ')"
  say "$1bootfiles=$(ls $boot | grep -iE 'altbeacon|authorized|readme' | tr '\n' ' ')"
  say "$1bootfw=$(findmnt -n -o OPTIONS $boot)"
}
# fat_write NAME: stdin onto the boot partition, as a PC would write it (opened, written, closed)
fat_write() {
  mount -o remount,rw "$boot" && cat >"$boot/$1" && sync && mount -o remount,ro "$boot"
}
journal() {
  journalctl -b --no-pager -o cat -u altbeacond 2>&1 | tail -"${1:-15}" | while IFS= read -r l; do say "journal=$l"; done
}
# ids: this card's identity (hostname, machine-id), as the host compares them across boots
ids() {
  say "hostname=$(cat /proc/sys/kernel/hostname) etc=$(cat /etc/hostname 2>/dev/null)"
  say "machineid=$(cat /etc/machine-id)"
  say "journalid=$(journalctl -b -n1 -o export --no-pager 2>/dev/null | sed -n 's/^_MACHINE_ID=//p')"
  # the A/B boot: the slot the boot script chose, the boot state, what the update gate says
  say "slot=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^rauc\.slot=//p') root=$(findmnt -n -o SOURCE /)"
  say "bootstate=$(fw_printenv 2>/dev/null | tr '\n' ' ')"
  say "updatestate=$(tr '\n' ' ' </run/altbeacon-update/state 2>/dev/null)"
}
# bt_up: two emulated LE controllers (the testbed's hci_vhci.ko built for this kernel, btvirt):
# hci0 for the beacon, hci1 for the observer and the monitor
bt_up() {
  modprobe bluetooth
  insmod $boot/abtest/hci_vhci.ko || say "insmod=failed"
  $boot/abtest/btvirt -l2 -L >/run/btvirt.log 2>&1 &
  i=0
  while [ $i -lt 100 ] && [ ! -e /sys/class/bluetooth/hci1 ]; do i=$((i + 1)); sleep 0.1; done
}
# update_state: the updater's state file on one line (what the monitor publishes)
update_state() { tr '\n' ' ' </run/altbeacon-update/state 2>/dev/null; }
# wait_update REGEX [S]: until the state file matches REGEX (default 300 s); says how long
wait_update() {
  i=0
  while [ $i -lt "${2:-300}" ] && ! update_state | grep -Eq "$1"; do i=$((i + 1)); sleep 1; done
  say "updatewaited_$i=$(update_state)"
}
# request KEY=VALUE...: an install request as the monitor writes one (a temporary file renamed)
request() {
  printf '%s\n' "$@" origin=abtest "time=$(date +%s)" >/run/altbeacon-update/.abtest.tmp
  mv /run/altbeacon-update/.abtest.tmp /run/altbeacon-update/request
}
# slot_report: a booted slot as the host checks it after an update: RAUC's view, the observer
# hearing the beacon, the root's version, failed units, the gate's last words
slot_report() {
  say "rauc=$(rauc status --output-format=shell 2>&1 | grep -E 'RAUC_SYSTEM_BOOTED_BOOTNAME|RAUC_BOOT_PRIMARY|RAUC_SLOT_STATE|RAUC_SLOT_BOOT_STATUS' | tr '\n' ' ')"
  say "heard=$($boot/abtest/observe -i hci1 --hex "$(cat $boot/abtest/on-air.hex)" --count 3 --timeout 30000 2>&1 | wc -l)"
  say "version=$(cat /usr/lib/altbeacon-image/version)"
  say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
  journalctl -b --no-pager -o cat -u altbeacon-update-gate 2>&1 | tail -5 | while IFS= read -r l; do say "gatejournal=$l"; done
}
# clock PREFIX: the card's clocks: the system clock, the image's floor (/usr/lib/clock-epoch),
# the time timesyncd last saved on the state partition, the RTC if the board has one, timesyncd
# and whether NTP synchronised it; what systemd and timesyncd said about setting the clock
clock() {
  say "$1clock=$(date +%s) epoch=$(stat -c %Y /usr/lib/clock-epoch 2>/dev/null) saved=$(stat -c %Y /var/lib/systemd/timesync/clock 2>/dev/null) rtc=$(cat /sys/class/rtc/rtc0/since_epoch 2>/dev/null || echo none) timesyncd=$(systemctl is-active systemd-timesyncd) synced=$([ -e /run/systemd/timesync/synchronized ] && echo yes || echo no)"
  say "$1clocklog=$({ journalctl -b --no-pager -o cat _PID=1; journalctl -b --no-pager -o cat -u systemd-timesyncd; } 2>&1 | grep -E 'System clock|clock time|recorded timestamp|build time|[Ee]poch' | tr '\n' '|' | cut -c1-400)"
}

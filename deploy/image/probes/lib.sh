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
}

#!/bin/sh
# Boot 1 (deploy/image/test-image): the identity from the boot partition, LEDs, read-only root,
# SSH on request; then a refused edit; then a new identity with the VM killed mid-import.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
wait_active
state ""
ids
clock ""
# The fleet's bundle at a wrong clock (a day before its key's certificate starts): RAUC checks the
# signer at the bundle's signing time (the image's system.conf), not at the clock; a copy of the
# config without that option shows what the clock alone would do. The clock is put back after.
if [ -f $boot/abtest/clock.raucb ]; then
  now=$(date +%s) up0=$(cut -d. -f1 /proc/uptime)
  date -s "@$(( $(cat $boot/abtest/cert-start) - 86400 ))" >/dev/null
  r=$(rauc info $boot/abtest/clock.raucb 2>&1); rc=$?
  say "rauc_signing_time=$rc: $(echo "$r" | grep -iE 'error|fail|valid|Compatible' | tr '\n' ' ' | cut -c1-300)"
  sed '/use-bundle-signing-time/d' /etc/rauc/system.conf >/run/abtest-rauc.conf
  r=$(rauc --conf=/run/abtest-rauc.conf info $boot/abtest/clock.raucb 2>&1); rc=$?
  say "rauc_clock_time=$rc: $(echo "$r" | grep -iE 'error|fail|valid' | tr '\n' ' ' | cut -c1-300)"
  date -s "@$(( now + $(cut -d. -f1 /proc/uptime) - up0 + 1 ))" >/dev/null
fi
say "check=$(altbeacond check --config /etc/altbeacond/config.toml 2>&1 | tr '\n' ' ' | cut -c1-300)"
if [ -x $boot/abtest/gpioinfo ]; then
  LD_LIBRARY_PATH=$boot/abtest $boot/abtest/gpioinfo 2>&1 | grep -E '^gpiochip|altbeacond' | while IFS= read -r l; do say "gpio=$l"; done
else
  grep -E 'altbeacond|^gpiochip' /sys/kernel/debug/gpio | while IFS= read -r l; do say "gpio=$l"; done
fi
say "root=$(findmnt -n -o OPTIONS /)"
say "persist=$(findmnt -n -o SOURCE,OPTIONS /persist | tr -s ' ')"
say "etcab=$(findmnt -n -o SOURCE /etc/altbeacond)"
say "touchroot=$(touch /usr/abtest 2>&1 && echo writable || echo read-only)"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
say "ssh=$(systemctl is-active ssh) keys=$(ls /persist/ssh 2>/dev/null | tr '\n' ' ')"
# TCP sockets in LISTEN (state 0A) and bound UDP sockets (07), IPv4 and IPv6
say "listen=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" {print "tcp:" $2}' | tr '\n' ' ')$(cat /proc/net/udp /proc/net/udp6 2>/dev/null | awk '$4 == "07" {print "udp:" $2}' | tr '\n' ' ')"
say "shadowroot=$(cut -d: -f1,2 /etc/shadow | grep '^root:')"
journal 10

# A refused edit, made as on a PC, applied at the next start of the service.
printf '[beacon]\r\nuuid = "not-a-uuid"\r\nmajor = 70000\r\n' | fat_write altbeacon.toml
systemctl restart altbeacond
wait_active 120 broken_
state broken_
say "broken_error=$(grep -m1 'altbeacon.toml:[0-9]*:[0-9]*:' $boot/altbeacon-error.txt 2>/dev/null | tr -d '\r')"
h=$(altbeacond health 2>&1); rc=$?
say "broken_health=exit $rc: $(echo "$h" | head -1)"

# The last known time saved on the state partition: timesyncd saves it every SaveIntervalSec
# (the image's 300 s, here 5 s so that a save happens before the cut)
mkdir -p /run/systemd/timesyncd.conf.d
printf '[Time]\nSaveIntervalSec=5\n' >/run/systemd/timesyncd.conf.d/abtest.conf
systemctl restart systemd-timesyncd
sleep 12
clock cut_

# A new identity, and the power cut: the host kills the VM as soon as the import has opened the
# boot partition for writing (import-boot-config-rw says so on the console).
mount -o remount,rw $boot && rm -f $boot/altbeacon-error.txt && mount -o remount,ro $boot
cat $boot/abtest/identity-b.toml | fat_write altbeacon.toml
echo "ABTEST-CUT-NEXT"
systemctl restart altbeacond
sleep 120
echo "ABTEST-DONE"

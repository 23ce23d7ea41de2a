#!/bin/sh
# Boot 1 (deploy/image/test-image): the identity from the boot partition, LEDs, read-only root,
# SSH on request; then a refused edit; then a new identity with the VM killed mid-import.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
wait_active
state ""
ids
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

# A new identity, and the power cut: the host kills the VM as soon as the import has opened the
# boot partition for writing (import-boot-config-rw says so on the console).
mount -o remount,rw $boot && rm -f $boot/altbeacon-error.txt && mount -o remount,ro $boot
cat $boot/abtest/identity-b.toml | fat_write altbeacon.toml
echo "ABTEST-CUT-NEXT"
systemctl restart altbeacond
sleep 120
echo "ABTEST-DONE"

#!/bin/sh
# Boot 2 (deploy/image/test-image): after the power cut, a clean boot with a whole config.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
wait_active
state ""
ids
clock ""
say "root=$(findmnt -n -o OPTIONS /)"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
say "ssh=$(systemctl is-active ssh)"
# the timers that will fire (masked ones are loaded, but never active)
say "timers=$(systemctl list-units --type=timer --state=active --no-legend --plain 2>&1 | awk '{print $1}' | sort | tr '\n' ' ')"
say "listen=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" {print "tcp:" $2}' | tr '\n' ' ')$(cat /proc/net/udp /proc/net/udp6 2>/dev/null | awk '$4 == "07" {print "udp:" $2}' | tr '\n' ' ')"
say "fsck=$(journalctl -b --no-pager -o cat -u 'systemd-fsck*' 2>&1 | tr '\n' '|' | cut -c1-300)"
journal 10
echo "ABTEST-DONE"

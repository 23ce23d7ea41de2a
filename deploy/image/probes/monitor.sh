#!/bin/sh
# Boot 6 (deploy/image/test-image, -M virt): the monitor turned on from the boot partition
# (monitor.toml, mqtt-password.txt, mqtt-ca.pem, mqtt-client.key written there by the host): the
# image's import put them in /etc/altbeacond, the enabled unit's condition let it start, its
# [mqtt] started the network, and it hears the beacon on hci1 and reaches the host's mosquitto.
# With the update boots (update.env on the boot partition), the boot goes on as update-a.sh.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
a=$boot/abtest
modprobe bluetooth
insmod $a/hci_vhci.ko || say "insmod=failed"
$a/btvirt -l2 -L >/run/btvirt.log 2>&1 &
wait_active 120
# issue 48: the broker's certificate begins tomorrow; this card's clock is what it restored (the
# last time it saved), so the monitor's TLS is refused with the clock until the time is known.
# Seen that, timesyncd is pointed at the host's SNTP answer (qemu's network has no NTP server and
# gives none by DHCP), which moves the clock two days on, and the monitor connects by itself.
i=0
while [ $i -lt 180 ]; do
  journalctl -b --no-pager -o cat -u altbeacond-monitor 2>/dev/null | grep -q 'validity starts in the future' && break
  i=$((i + 1)); sleep 1
done
say "montls=$(journalctl -b --no-pager -o cat -u altbeacond-monitor 2>/dev/null | grep -m1 'validity starts in the future')"
mkdir -p /run/systemd/timesyncd.conf.d
printf '[Time]\nNTP=10.0.2.2\n' >/run/systemd/timesyncd.conf.d/abtest.conf
systemctl restart systemd-timesyncd
i=0
while [ $i -lt 60 ] && [ ! -e /run/systemd/timesync/synchronized ]; do i=$((i + 1)); sleep 1; done
say "monsynced=$([ -e /run/systemd/timesync/synchronized ] && echo yes || echo no) after=${i}s clock=$(date -u +%Y-%m-%dT%H:%MZ)"
# the monitor: heard the beacon and connected to the broker (its log says both), 240 s at most
i=0
while [ $i -lt 240 ]; do
  j=$(journalctl -b --no-pager -o cat -u altbeacond-monitor 2>/dev/null)
  echo "$j" | grep -q 'MQTT: connected' && echo "$j" | grep -q 'beacon lobby heard' && break
  i=$((i + 1)); sleep 1
done
say "monwaited=$i"
say "monenabled=$(systemctl is-enabled altbeacond-monitor)"
say "monactive=$(systemctl is-active altbeacond-monitor)"
say "monuser=$(ps -o user= -C altbeacond | sort -u | tr '\n' ' ')"
for f in monitor.toml mqtt-password mqtt-client.key mqtt-ca.pem; do
  say "mon_$f=$(stat -c '%a %U:%G' /etc/altbeacond/$f 2>&1)"
done
say "monpassword=$(od -An -tx1 /etc/altbeacond/mqtt-password | tr -s ' \n' ' ')"
# the public CAs, the monitor's default ca_file with tls = true (package ca-certificates)
say "cabundle=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt 2>&1)"
say "monbootfiles=$(ls $boot | grep -iE 'monitor|mqtt' | tr '\n' ' ')"
say "bootfw=$(findmnt -n -o OPTIONS $boot)"
say "networkd=$(systemctl is-active systemd-networkd) ssh=$(systemctl is-active ssh)"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
journalctl -b --no-pager -o cat -u altbeacond-monitor 2>&1 | tail -12 | while IFS= read -r l; do say "monjournal=$l"; done
journalctl -b --no-pager -o cat -u altbeacond 2>&1 | grep -E 'import-boot-config' | while IFS= read -r l; do say "importjournal=$l"; done
if [ -f $a/update.env ]; then . $a/update-a.sh; fi
echo "ABTEST-DONE"

#!/bin/sh
# Boots 3 and 4 (deploy/image/test-image): a card as Raspberry Pi Imager leaves it (firstrun.sh
# and its cmdline.txt additions, or cloud-init's user-data): the beacon on air at once, the
# hostname, keys and time zone it asked for, firstrun.sh never run.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
wait_active
state ""
ids
say "derived=$(/usr/lib/altbeacon-image/identity --print)"
say "tz=$(readlink -f /etc/localtime) $(date +%Z)"
# sshd is started by altbeacon-ssh (--no-block): on a loaded host it may still be starting
i=0
# (inactive while its start job waits for the network: altbeacon-network renders it first)
while [ "$(systemctl is-active ssh)" != active ] && [ $i -lt 180 ]; do i=$((i + 1)); sleep 1; done
say "ssh=$(systemctl is-active ssh) keys=$(cut -d' ' -f3 /run/altbeacon-ssh/authorized_keys 2>/dev/null | tr '\n' ' ')"
say "kcl=$(systemctl show -p ActiveState -p Result kernel-command-line.service | tr '\n' ' ')"
say "target=$(systemctl is-active multi-user.target)"
say "ranfirstrun=$(ls -d /etc/wpa_supplicant/wpa_supplicant.conf /home/firstrun-was-run 2>/dev/null | tr "\n" " ")"
say "rfkill=$(systemctl is-enabled systemd-rfkill.service systemd-rfkill.socket 2>&1 | tr '\n' ' ')"
# the Imager's Wi-Fi (network-config, or firstrun.sh's set_wlan): imported, rendered (no secret here)
say "netstore=$(stat -c '%a %U' /persist/network/network-config 2>&1)"
say "wpaconf=$(grep -hE '^country=|ssid=' /run/netplan/wpa-wlan0.conf 2>&1 | tr -d ' ' | tr '\n' ' ')"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
journalctl -b --no-pager -o cat -u altbeacon-boot-settings 2>&1 | tail -8 | while IFS= read -r l; do say "settings=$l"; done
journal 5
echo "ABTEST-DONE"

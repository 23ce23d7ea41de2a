#!/bin/sh
# Boot 7 (deploy/image/test-image, -M virt): Wi-Fi from the boot partition. Two mac80211_hwsim
# radios in this guest: the card's wlan0, and wlan1 moved into a network namespace "ap" where the
# arm64 testbed's hostapd (WPA2-PSK, hidden SSID), dnsmasq (DHCP) and mosquitto run, from the
# testbed's root shared over 9p (never part of the image). The card's network-config (written
# by the host) must join that hidden network with the passphrase, get an address by DHCP, answer
# mDNS for its name from the AP's side, and carry the monitor's MQTT to that mosquitto. Then a
# broken network-config: network-error.txt, the network and the beacon kept.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
a=$boot/abtest
modprobe bluetooth
insmod $a/hci_vhci.ko || say "insmod=failed"
$a/btvirt -l2 -L >/run/btvirt.log 2>&1 &
# the access point's side, from the testbed's root (read-only over 9p; RAM for /run and /tmp)
modprobe mac80211_hwsim radios=2 || say "hwsim=failed"
modprobe 9pnet_virtio; modprobe 9p
tb=/run/tb
mkdir -p $tb
mount -t 9p -o trans=virtio,version=9p2000.L,ro testbed $tb || say "9p=failed"
mount -t proc proc $tb/proc; mount --rbind /sys $tb/sys; mount --rbind /dev $tb/dev
mount -t tmpfs tmpfs $tb/run; mount -t tmpfs tmpfs $tb/tmp
tb() { chroot $tb "$@"; }
ap() { chroot $tb ip netns exec ap "$@"; }
i=0; while [ ! -e /sys/class/net/wlan1 ] && [ $i -lt 30 ]; do i=$((i + 1)); sleep 1; done
tb ip netns add ap
tb iw phy "$(cat /sys/class/net/wlan1/phy80211/name)" set netns name ap
ap ip link set lo up
ap ip addr add 192.168.77.1/24 dev wlan1
cat >$tb/tmp/hostapd.conf <<EOF
interface=wlan1
driver=nl80211
ssid=abtest-hidden
ignore_broadcast_ssid=1
hw_mode=g
channel=6
wpa=2
wpa_key_mgmt=WPA-PSK
rsn_pairwise=CCMP
wpa_passphrase=abtest wifi passphrase 42
EOF
ap hostapd -B -f /tmp/hostapd.log /tmp/hostapd.conf || say "hostapd=failed"
ap dnsmasq --interface=wlan1 --bind-interfaces --port=0 --dhcp-range=192.168.77.50,192.168.77.99,1h \
  --user=root --pid-file=/tmp/dnsmasq.pid --dhcp-leasefile=/tmp/dnsmasq.leases --log-dhcp \
  --log-facility=/tmp/dnsmasq.log || say "dnsmasq=failed"
printf 'user root\nlistener 1883 192.168.77.1\nallow_anonymous true\npersistence false\n' >$tb/tmp/mosquitto.conf
ap mosquitto -d -c /tmp/mosquitto.conf || say "mosquitto=failed"
wait_active 120
# associated, an address from dnsmasq, the monitor connected to the AP's broker: 240 s at most
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 240 ]; do
  j=$(journalctl -b --no-pager -o cat -u altbeacond-monitor 2>/dev/null)
  tb ip -4 -o addr show dev wlan0 | grep -q 'inet 192.168.77.' && echo "$j" | grep -q 'MQTT: connected' \
    && echo "$j" | grep -q 'beacon lobby heard' && break
  sleep 2
done
say "wifiwaited=$(($(date +%s) - t0))"
# the name systemd-resolved answers for ("Using system hostname ...")
journalctl -b --no-pager -o cat -u systemd-resolved 2>&1 | grep -i hostname | while IFS= read -r l; do say "resolvedjournal=$l"; done
say "link=$(tb iw dev wlan0 link | tr '\n\t' '  ' | cut -c1-200)"
say "addr=$(tb ip -4 -o addr show dev wlan0 | awk '{print $4}' | tr '\n' ' ')"
say "addrs=$(tb ip -4 -o addr show | awk '$2 != "lo" {print $2 ":" $4}' | tr '\n' ' ')"
say "reg=$(tb iw reg get | grep -m1 '^country' | cut -c1-40)"
say "leases=$(cut -d' ' -f3,4 $tb/tmp/dnsmasq.leases 2>/dev/null | tr '\n' ' ')"
say "hostname=$(cat /proc/sys/kernel/hostname)"
say "units=$(for u in altbeacon-network-import altbeacon-network systemd-networkd systemd-resolved ssh; do printf '%s:%s ' $u "$(systemctl is-active $u)"; done)"
say "wpaunits=$(systemctl list-units --no-legend --plain 'netplan-*' | awk '{print $1 ":" $3}' | tr '\n' ' ')"
say "store=$(stat -c '%a %U' /persist/network /persist/network/network-config 2>&1 | tr '\n' ' ')"
say "netbootfiles=$(ls $boot | grep -iE 'network|firstrun' | tr '\n' ' ')"
# mDNS from the access point's side: the card's name, asked on the Wi-Fi
say "networkfiles=$(ls /run/systemd/network | tr '\n' ' ')"
say "resolvectl=$(resolvectl status wlan0 2>&1 | grep -iE 'protocols|mdns' | tr -s ' \n' '  ')"
cp $a/mdns-query.py $tb/tmp/
say "mdns=$(ap python3 /tmp/mdns-query.py "$(cat /proc/sys/kernel/hostname).local" 192.168.77.1 2>&1 | tr '\n' ' ')"
# the broker on the AP side holds the monitor's retained state, carried over Wi-Fi
say "retained=$(ap mosquitto_sub -h 192.168.77.1 -t 'altbeacond/+/beacons/lobby' -C 1 -W 10 2>&1 | cut -c1-160)"
say "listen=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" {print "tcp:" $2}' | tr '\n' ' ')$(cat /proc/net/udp /proc/net/udp6 2>/dev/null | awk '$4 == "07" {print "udp:" $2}' | tr '\n' ' ')"
say "active=$(systemctl is-active altbeacond)"
journalctl -b --no-pager -o cat -u altbeacon-network-import -u altbeacon-network 2>&1 | tail -8 | while IFS= read -r l; do say "netjournal=$l"; done
# a broken network-config, as a PC edit: refused with LINE:COL, the network and the beacon kept
printf 'network:\r\n  version: 2\r\n  wifis:\r\n    wlan0:\r\n      dhcp4: maybe\r\n' | fat_write network-config
systemctl restart altbeacon-network-import.service
say "bad_error=$(tr -d '\r' <$boot/network-error.txt 2>&1 | tr '\n' '|' | cut -c1-300)"
say "bad_bootfiles=$(ls $boot | grep -iE 'network' | tr '\n' ' ')"
say "bad_bootfw=$(findmnt -n -o OPTIONS $boot)"
sleep 3
say "bad_addr=$(tb ip -4 -o addr show dev wlan0 | awk '{print $4}' | tr '\n' ' ')"
say "bad_active=$(systemctl is-active altbeacond)"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
echo "ABTEST-DONE"

# deploy/image/test-image's boot 7 (sourced by it, with its helpers and variables): Wi-Fi from the
# boot partition under -M virt (probes/wifi.sh runs the access point inside the guest).
# shellcheck shell=bash
wifi_pass='abtest wifi passphrase 42'
boot_wifi() {
  [ "$onair" = yes ] || { bad "wifi: no hci_vhci.ko/btvirt for this kernel (deploy/testbed/prepare-arm64)"; return; }
  local c=$ARM64_CHROOT t
  for t in usr/sbin/hostapd usr/sbin/dnsmasq usr/sbin/iw usr/sbin/mosquitto usr/bin/mosquitto_sub usr/bin/python3 bin/ip; do
    [ -e "$c/$t" ] || { bad "wifi: no $t in the arm64 testbed root $c (deploy/testbed/prepare-arm64)"; return; }
  done
  mdel -i "$fat" ::authorized_keys ::altbeacon-error.txt ::monitor-error.txt ::firstrun.sh ::user-data 2>/dev/null || true
  identity "$uuid_c" 4660 86 | fat_put altbeacon.toml
  # the network as Raspberry Pi Imager writes it (cloud-init's network-config), hidden network and
  # passphrase, saved by a Windows editor (BOM, CRLF)
  { printf '\xef\xbb\xbf'; sed 's/$/\r/'; } <<EOF | fat_put network-config
# written by deploy/image/test-image
network:
  version: 2
  wifis:
    wlan0:
      dhcp4: true
      regulatory-domain: "DE"
      access-points:
        "abtest-hidden":
          hidden: true
          password: "$wifi_pass"
      optional: true
EOF
  { printf '\xef\xbb\xbf'; sed 's/$/\r/'; } <<EOF | fat_put monitor.toml
# written by deploy/image/test-image
[monitor]
adapter = "hci1"
silent_after_s = 60
rescan_s = 10

[expect.lobby]
type = "altbeacon"
uuid = "$uuid_c"
major = 4660
minor = 86

[mqtt]
host = "192.168.77.1"
EOF
  virt_share=$c virt_serial=00000000c0ffee04 boot wifi virt wifi
  expect wifi hostname '^altbeacon-ffee04$' "hostname altbeacon-ffee04 from the board serial in the device tree"
  expect wifi units 'altbeacon-network-import:active altbeacon-network:active systemd-networkd:active systemd-resolved:active ssh:inactive' "the network units up from network-config, no SSH"
  expect wifi link 'Connected to .*SSID: abtest-hidden' "wlan0 associated with the hidden network (WPA2 passphrase)"
  expect wifi addr '^192\.168\.77\.(5[0-9]|[6-9][0-9])/24' "an address on wlan0 from the AP's DHCP server"
  expect wifi addrs '^wlan0:192\.168\.77\.[0-9]+/24 $' "no other interface configured (no wired default beside a network-config)"
  expect wifi reg 'country DE' "the Wi-Fi country DE from regulatory-domain"
  expect wifi store '^700 root 600 root $' "kept on the state partition: /persist/network 0700, network-config 0600 root"
  expect wifi netbootfiles '^ *$' "network-config gone from the FAT"
  expect wifi mdns "^altbeacon-ffee04\\.local=192\\.168\\.77\\.[0-9]+ " "mDNS: altbeacon-ffee04.local answered on the Wi-Fi (asked from the AP's side)"
  expect wifi retained '"heard":true' "the monitor's retained state on the AP's mosquitto, across Wi-Fi"
  expect wifi active '^active$' "the beacon on air"
  expect wifi bad_error 'network-config:5:[0-9]+' "a broken network-config: network-error.txt with LINE:COL"
  expect wifi bad_bootfiles 'network-config' "the broken network-config left on the FAT"
  expect wifi bad_bootfw '(^|,)ro(,|$)' "the FAT read-only again"
  expect wifi bad_addr '^192\.168\.77\.' "the network kept after the refused file"
  expect wifi bad_active '^active$' "the beacon still on air after the refused file"
  expect wifi failed '^ *$' "no failed units"
  if [ "$(val wifi wifiwaited)" -lt 240 ] 2>/dev/null; then
    ok "wifi: the monitor heard the beacon and connected within $(val wifi wifiwaited) s"
  else bad "wifi: the monitor did not connect and hear the beacon within 240 s"; fi
  # the passphrase line of network-config nowhere on the FAT, not even in the clusters of the
  # deleted file (the probe on the FAT holds the access point's side of it, in hostapd's words)
  local start size n
  start=$(sed -n "s/^[^ ]*1 : start= *\([0-9]*\),.*/\1/p" "$w/sfdisk.txt")
  size=$(sed -n "s/^[^ ]*1 : start= *[0-9]*, size= *\([0-9]*\),.*/\1/p" "$w/sfdisk.txt")
  n=$(dd if="$img" bs=512 skip="$start" count="$size" status=none | grep -ac "password: \"$wifi_pass\"" || true)
  if [ "$n" = 0 ]; then ok "wifi: the passphrase is nowhere on the FAT (its bytes overwritten before the delete)"
  else bad "wifi: the passphrase is still on the FAT ($n places)"; fi
  mdel -i "$fat" ::network-config ::network-error.txt ::monitor.toml 2>/dev/null || true
}

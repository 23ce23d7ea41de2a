# deploy/image/test-image's boot 6 (sourced by it, with its helpers and variables): the monitor
# turned on from the boot partition, under -M virt. Kept apart: test-image is long enough. With
# the update boots asked for too, the same boot goes on as update boot 1 (test-image-update.sh:
# update_prepare before it, update_a_checks after): one boot under emulation fewer.
# shellcheck shell=bash
boot_monitor() {
  [ "$onair" = yes ] || { bad "monitor: no hci_vhci.ko/btvirt for this kernel (deploy/testbed/prepare-arm64)"; return; }
  local t port pw='abtest pass 1' got update=no
  ! boot_wanted update || update=yes
  for t in mosquitto mosquitto_passwd mosquitto_sub openssl; do
    command -v "$t" >/dev/null || { bad "monitor: $t is missing (deploy/install-deps)"; return; }
  done
  mdel -i "$fat" ::authorized_keys ::altbeacon-error.txt 2>/dev/null || true
  identity "$uuid_c" 4660 86 | fat_put altbeacon.toml
  # the host's broker, with a password, on the address the guest reaches as 10.0.2.2
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  rm -f "$w/mosquitto.pw"; mosquitto_passwd -c -b "$w/mosquitto.pw" altbeacond "$pw" 2>/dev/null
  printf 'user root\nlistener %s 127.0.0.1\nallow_anonymous false\npassword_file %s\npersistence false\n' "$port" "$w/mosquitto.pw" >"$w/mosquitto.conf"
  mosquitto -c "$w/mosquitto.conf" >"$w/mosquitto.log" 2>&1 &
  mqpid=$!
  { printf '\xef\xbb\xbf'; sed 's/$/\r/'; } <<EOF2 | fat_put monitor.toml
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
host = "10.0.2.2"
port = $port
username = "altbeacond"
password_file = "/etc/altbeacond/mqtt-password"
# the update boots after this one (test-image-update.sh) take the fleet's releases
control = "fleet"
EOF2
  printf '\xef\xbb\xbf%s\r\n' "$pw" | fat_put mqtt-password.txt
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=abtest-ca \
    -keyout "$w/ca.key" -out "$w/ca.pem" 2>/dev/null
  fat_put mqtt-ca.pem <"$w/ca.pem"
  fat_put mqtt-client.key <"$w/ca.key"
  if [ "$update" = yes ]; then
    update_prepare || return
    mq_port=$port mq_pw=$pw boot_name=monitor
    publish_on ABTEST-PUBLISH-GOOD "$(release good "$good_version")"
  fi
  # with the updates, also a whole install into slot B
  boot_limit=$([ "$update" = yes ] && echo "$install_boot_limit") boot monitor virt monitor
  [ "$update" = no ] || kill "$pubpid" 2>/dev/null || true
  expect monitor monenabled '^enabled$' "altbeacond-monitor enabled in the image"
  expect monitor monactive '^active$' "the monitor started: /etc/altbeacond/monitor.toml imported from the boot partition"
  expect monitor monuser '^altbeacond $' "beacon and monitor run as altbeacond"
  expect monitor mon_monitor.toml '^644 root:root$' "/etc/altbeacond/monitor.toml 0644 root"
  expect monitor mon_mqtt-password '^640 root:altbeacond$' "/etc/altbeacond/mqtt-password root:altbeacond 0640"
  expect monitor mon_mqtt-client.key '^640 root:altbeacond$' "/etc/altbeacond/mqtt-client.key root:altbeacond 0640"
  expect monitor mon_mqtt-ca.pem '^644 root:root$' "/etc/altbeacond/mqtt-ca.pem 0644 root"
  expect monitor monpassword '^ 61 62 74 65 73 74 20 70 61 73 73 20 31 0a $' "the password's first line ('abtest pass 1'), BOM and CR dropped"
  expect monitor cabundle '^[1-9][0-9][0-9]+$' "Debian's public CAs in /etc/ssl/certs/ca-certificates.crt (the monitor's default ca_file)"
  expect monitor monbootfiles '^monitor.toml.applied mqtt-ca.pem.applied $' "on the FAT: monitor.toml and mqtt-ca.pem renamed .applied, the password and key deleted"
  expect monitor bootfw '(^|,)ro(,|$)' "boot partition read-only after the import"
  expect monitor networkd '^active ssh=inactive$' "the monitor's [mqtt] started the network (no SSH asked for)"
  expect monitor failed '^ *$' "no failed units"
  if grep -aq 'ABTEST monjournal=MQTT: connected' "$w/monitor.log"; then ok "monitor: connected to the host's mosquitto with the password from the boot partition"
  else bad "monitor: no 'MQTT: connected' in the monitor's log"; fi
  if grep -aq 'ABTEST monjournal=.*beacon lobby heard' "$w/monitor.log"; then ok "monitor: heard the beacon on hci1"
  else bad "monitor: the beacon not heard"; fi
  got=$(timeout 15 mosquitto_sub -h 127.0.0.1 -p "$port" -u altbeacond -P "$pw" -t 'altbeacond/+/beacons/lobby' -C 1 -W 10 2>&1 || true)
  if echo "$got" | grep -q '"heard":true'; then ok "monitor: the broker holds the beacon's retained state: $(echo "$got" | cut -c1-100)"
  else bad "monitor: no retained altbeacond/+/beacons/lobby with \"heard\":true ($got)"; fi
  if [ "$update" = yes ]; then update_a_checks monitor   # the broker stays for the update boots
  else kill "$mqpid" 2>/dev/null || true; wait "$mqpid" 2>/dev/null || true; mqpid=""; fi
  if mdir -b -i "$fat" :: | grep -Eiq 'mqtt-password|mqtt-client.key|monitor-error'; then
    bad "monitor: the FAT still holds: $(mdir -b -i "$fat" :: | grep -Ei 'mqtt|monitor' | tr '\n' ' ')"
  else ok "monitor: no secret and no monitor-error.txt left on the FAT (read from the host)"; fi
}

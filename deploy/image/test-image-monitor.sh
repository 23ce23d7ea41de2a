# deploy/image/test-image's boot 6 (sourced by it, with its helpers and variables): the monitor
# turned on from the boot partition, under -M virt. Kept apart: test-image is long enough. With
# the update boots asked for too, the same boot goes on as update boot 1 (test-image-update.sh:
# update_prepare before it, update_a_checks after): one boot under emulation fewer.
# shellcheck shell=bash
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# tls_certs: in $w/tls a CA and the broker's certificate (broker.test), both valid from tomorrow
# for 30 days (`openssl ca` takes explicit dates; `req -x509` has none in OpenSSL 3.0), and a
# client key for the import's modes
tls_certs() {
  local d=$w/tls from to
  rm -rf "$d"; mkdir -p "$d/db"; : >"$d/db/index.txt"; echo 1000 >"$d/db/serial"
  from=$(date -u -d '+1 day' +%Y%m%d%H%M%SZ) to=$(date -u -d '+30 days' +%Y%m%d%H%M%SZ)
  printf '[ca]\ndefault_ca = t\n[t]\nunique_subject = no\ndatabase = %s/db/index.txt\nserial = %s/db/serial\nnew_certs_dir = %s/db\ndefault_md = sha256\npolicy = p\ncopy_extensions = copy\n[p]\ncommonName = supplied\n' \
    "$d" "$d" "$d" >"$d/ca.cnf"
  printf 'basicConstraints = critical, CA:true\nkeyUsage = critical, keyCertSign, cRLSign\n' >"$d/ca.ext"
  printf 'subjectAltName = DNS:broker.test\nextendedKeyUsage = serverAuth\n' >"$d/broker.ext"
  { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=abtest-ca -keyout "$d/ca.key" -out "$d/ca.csr" &&
    openssl ca -batch -selfsign -config "$d/ca.cnf" -keyfile "$d/ca.key" -in "$d/ca.csr" -out "$d/ca.pem" -notext \
      -startdate "$from" -enddate "$to" -extfile "$d/ca.ext" &&
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=broker.test -keyout "$d/broker.key" -out "$d/broker.csr" &&
    openssl ca -batch -config "$d/ca.cnf" -cert "$d/ca.pem" -keyfile "$d/ca.key" -in "$d/broker.csr" -out "$d/broker.pem" -notext \
      -startdate "$from" -enddate "$to" -extfile "$d/broker.ext" &&
    openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:prime256v1 -out "$d/client.key"; } >"$d/openssl.log" 2>&1 \
    || { bad "monitor: the broker's certificates: $(tail -n3 "$d/openssl.log" | tr '\n' ' ')"; return 1; }
}
boot_monitor() {
  [ "$onair" = yes ] || { bad "monitor: no hci_vhci.ko/btvirt for this kernel (deploy/testbed/prepare-arm64)"; return; }
  local t port pw='abtest pass 1' got update=no
  ! boot_wanted update || update=yes
  for t in mosquitto mosquitto_passwd mosquitto_sub openssl; do
    command -v "$t" >/dev/null || { bad "monitor: $t is missing (deploy/install-deps)"; return; }
  done
  mdel -i "$fat" ::authorized_keys ::altbeacon-error.txt 2>/dev/null || true
  identity "$uuid_c" 4660 86 | fat_put altbeacon.toml
  # the host's broker, with a password, on the address the guest reaches as 10.0.2.2: plain for
  # the host's own clients, TLS for the card's monitor with a certificate that begins tomorrow
  # (issue 48: what a card sees of a broker's certificate before it has the time)
  port=$(free_port) tlsport=$(free_port)
  tls_certs || return
  rm -f "$w/mosquitto.pw"; mosquitto_passwd -c -b "$w/mosquitto.pw" altbeacond "$pw" 2>/dev/null
  printf 'user root\nper_listener_settings false\nallow_anonymous false\npassword_file %s\npersistence false\nlistener %s 127.0.0.1\nlistener %s 127.0.0.1\ncafile %s\ncertfile %s\nkeyfile %s\n' \
    "$w/mosquitto.pw" "$port" "$tlsport" "$w/tls/ca.pem" "$w/tls/broker.pem" "$w/tls/broker.key" >"$w/mosquitto.conf"
  mosquitto -c "$w/mosquitto.conf" >"$w/mosquitto.log" 2>&1 &
  mqpid=$!
  # the time: an SNTP answer two days ahead (inside the certificate's validity), on the port
  # the card's timesyncd asks (monitor.sh points it at 10.0.2.2): qemu's user network has none
  python3 "$here/sntp-server.py" 123 172800 "$w/sntp.log" 2>>"$w/sntp.log" &
  sntppid=$!
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
port = $tlsport
tls = true
ca_file = "/etc/altbeacond/mqtt-ca.pem"
server_name = "broker.test"
username = "altbeacond"
password_file = "/etc/altbeacond/mqtt-password"
# the update boots after this one (test-image-update.sh) take the fleet's releases
control = "fleet"
EOF2
  printf '\xef\xbb\xbf%s\r\n' "$pw" | fat_put mqtt-password.txt
  fat_put mqtt-ca.pem <"$w/tls/ca.pem"
  fat_put mqtt-client.key <"$w/tls/client.key"
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
  if grep -aq 'ABTEST monjournal=MQTT: connected.*over TLS' "$w/monitor.log"; then ok "monitor: connected to the host's mosquitto over TLS with the password from the boot partition"
  else bad "monitor: no 'MQTT: connected … over TLS' in the monitor's log"; fi
  # issue 48: before the time, the certificate was not yet valid and said so with the clock; once
  # timesyncd had the (host's) time, the same monitor connected by itself
  if grep -aq 'ABTEST montls=.*validity starts in the future' "$w/monitor.log"; then
    ok "monitor: before the time was known: $(grep -a 'ABTEST montls=' "$w/monitor.log" | head -n1 | sed 's/.*montls=//' | cut -c1-160)"
  else bad "monitor: no refusal of the not-yet-valid certificate before the time was known (the clock was already right?)"; fi
  expect monitor monsynced '^yes ' "timesyncd synchronised from the host's SNTP answer (two days ahead)"
  if grep -q '^answered ' "$w/sntp.log"; then ok "monitor: the host's SNTP server answered $(grep -c '^answered ' "$w/sntp.log") times"
  else bad "monitor: the host's SNTP server got no request ($(head -c 300 "$w/sntp.log"))"; fi
  kill "$sntppid" 2>/dev/null || true; wait "$sntppid" 2>/dev/null || true
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

# timeout: 240
# arch: amd64
# (dnsmasq and avahi-daemon are in deploy/install-deps, not in the arm64 root file system.)
# Issue 30, the broker by name: `altbeacond monitor` (no adapter needed: its MQTT output runs all
# the same) finds mosquitto through Debian's dnsmasq (a name, a single label through resolv.conf's
# search domain and a CNAME, a name that does not exist) and avahi-daemon (a .local name over mDNS,
# RFC 6762 legacy unicast). The static binary has no glibc resolver: these are its own queries.
. "$TB_REPO/deploy/testbed/lib.sh"
ip link set lo up
# A link for mDNS: avahi ignores the loopback interface.
modprobe -d "$TB_KROOT" -S "$TB_KVER" dummy || tb_fail "modprobe dummy"
ip link add mdns0 type dummy && ip link set mdns0 multicast on up && ip addr add 10.77.0.1/24 dev mdns0 \
  && ip route add 224.0.0.0/4 dev mdns0 || tb_fail "the dummy link"

printf 'listener 1883\nallow_anonymous true\n' >/tmp/mosquitto.conf
mosquitto -c /tmp/mosquitto.conf >/tmp/mosquitto.log 2>&1 &
for ((i = 0; i < 50; i++)); do mosquitto_sub -t x -W 1 -C 1 >/dev/null 2>&1; [ $? != 27 ] || break; _tb_sleep 0.1; done

# DNS: dnsmasq on 127.0.0.53 knows broker.lan (10.77.0.1) and mqtt.lan (a CNAME of it); every
# other name under lan does not exist. resolv.conf (bound over the read-only host's) points there.
dnsmasq --keep-in-foreground --conf-file=/dev/null --listen-address=127.0.0.53 --bind-interfaces --no-resolv --no-hosts \
  --host-record=broker.lan,10.77.0.1 --cname=mqtt.lan,broker.lan --local=/lan/ --log-queries --log-facility=/tmp/dnsmasq.log \
  --pid-file=/tmp/dnsmasq.pid --user=root &
printf 'search lan\nnameserver 127.0.0.53\n' >/tmp/resolv.conf
mount --bind /tmp/resolv.conf /etc/resolv.conf || tb_fail "cannot bind resolv.conf"

# mDNS: avahi-daemon publishes this machine as brokerbox.local on mdns0 (no D-Bus needed).
mkdir -p /run/avahi-daemon
printf '[server]\nhost-name=brokerbox\ndomain-name=local\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=mdns0\nenable-dbus=no\n[publish]\npublish-addresses=yes\n' >/tmp/avahi.conf
avahi-daemon --no-drop-root --no-chroot --no-rlimits -f /tmp/avahi.conf >/tmp/avahi.log 2>&1 &

# monitor NAME HOST: a monitor whose broker is HOST, its log /tmp/NAME.log
monitor() {
  printf '[monitor]\nadapter = "hci7"\nnode = "%s"\n[expect.rig]\ntype = "altbeacon"\nuuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"\nmajor = 1\nminor = 2\n[mqtt]\nhost = "%s"\nkeepalive_s = 30\n' \
    "$1" "$2" >"/tmp/$1.toml"
  "$ALTBEACOND_BIN" monitor --config "/tmp/$1.toml" >"/tmp/$1.log" 2>&1 </dev/null &
  PIDS+=($!)
}
PIDS=()
wait_log() {  # NAME PATTERN TIMEOUT_S
  local i
  for ((i = 0; i < $3 * 20; i++)); do grep -q "$2" "/tmp/$1.log" && return 0; _tb_sleep 0.05; done
  return 1
}
dump() { for f in "$@"; do echo "--- $f:"; cat "$f"; done; }

# The check refuses a port in host, with the fix.
monitor portin "10.77.0.1:1883"
wait "${PIDS[0]}"
grep -q 'mqtt.host "10.77.0.1:1883" has a port in it: put the port in mqtt.port' /tmp/portin.log || { dump /tmp/portin.log; tb_fail "host with a port not refused"; }

monitor byname broker.lan
monitor bylabel mqtt
monitor bymdns brokerbox.local
monitor nxname nothing.lan
wait_log byname "MQTT: connected to broker.lan:1883" 15 || { dump /tmp/byname.log /tmp/dnsmasq.log; tb_fail "broker.lan: not connected"; }
wait_log bylabel "MQTT: connected to mqtt:1883" 15 || { dump /tmp/bylabel.log /tmp/dnsmasq.log; tb_fail "mqtt (search lan, CNAME): not connected"; }
wait_log nxname "cannot resolve 'nothing.lan': no such name, says 127.0.0.53 (DNS)" 15 || { dump /tmp/nxname.log /tmp/dnsmasq.log; tb_fail "nothing.lan: not said"; }
wait_log bymdns "MQTT: connected to brokerbox.local:1883" 30 || { dump /tmp/bymdns.log /tmp/avahi.log; tb_fail "brokerbox.local: not connected"; }
grep -q "query\[A\] mqtt.lan from 127.0.0.1" /tmp/dnsmasq.log || { dump /tmp/dnsmasq.log; tb_fail "mqtt was not asked as mqtt.lan"; }
# Three sessions from 10.77.0.1: the address each name stood for (the broker also listens on 127.0.0.1).
[ "$(grep -c 'New client connected from 10.77.0.1' /tmp/mosquitto.log)" -ge 3 ] || { dump /tmp/mosquitto.log; tb_fail "mosquitto did not see three sessions from 10.77.0.1"; }

# dnsmasq gone: the failure names the server; back-off as for any other cause.
kill "$(cat /tmp/dnsmasq.pid)"
monitor noserver broker.lan
wait_log noserver "cannot resolve 'broker.lan': 127.0.0.53 refused the query" 15 || { dump /tmp/noserver.log; tb_fail "no DNS server: not said"; }
kill "${PIDS[@]}" 2>/dev/null
umount /etc/resolv.conf
tb_pass "broker.lan (DNS, dnsmasq), mqtt (search lan + CNAME) and brokerbox.local (mDNS, avahi-daemon) connected (three sessions from 10.77.0.1 in mosquitto's log); nothing.lan: no such name; no server: refused, said; a port in host refused by the check"

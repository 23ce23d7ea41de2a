# timeout: 240
# arch: amd64
# (dnsmasq and avahi-daemon are in deploy/install-deps, not in the arm64 root file system.)
# Issue 30, the broker by name: `altbeacond monitor` (no adapter needed: its MQTT output runs all
# the same) finds mosquitto through Debian's dnsmasq (a name, a single label through resolv.conf's
# search domain and a CNAME, a name that does not exist) and avahi-daemon (a .local name over mDNS,
# RFC 6762 legacy unicast). The static binary has no glibc resolver: these are its own queries.
# Issue 38: avahi answers from this machine's own address (10.77.0.1, delivered over lo), which
# the source address check takes as on-link; a rogue responder answering rogue.local from another
# port than 5353 is ignored (RFC 6762 §6) and said, and no session is opened to its address.
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

# The rogue: listens on 224.0.0.251:5353 beside avahi, answers A queries for rogue.local with
# 10.77.0.1 (where mosquitto listens) from an ephemeral port, not 5353.
cat >/tmp/rogue.py <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if hasattr(socket, "SO_REUSEPORT"):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("", 5353))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("224.0.0.251") + socket.inet_aton("10.77.0.1"))
out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
open(sys.argv[1], "w").close()
while True:
    q, src = s.recvfrom(1500)
    if len(q) < 17 or q[2] & 0x80:
        continue
    labels, i = [], 12
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode(errors="replace")); i += 1 + q[i]
    if ".".join(labels).lower() != "rogue.local" or q[i + 1:i + 3] != b"\x00\x01":
        continue
    answer = q[:2] + b"\x84\x00\x00\x01\x00\x01\x00\x00\x00\x00" + q[12:i + 5]
    answer += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + socket.inet_aton("10.77.0.1")
    out.sendto(answer, src)
    print("answered %s:%d from port %d" % (src[0], src[1], out.getsockname()[1]), flush=True)
PY
python3 /tmp/rogue.py /tmp/rogue-ready >/tmp/rogue-responder.log 2>&1 &
ROGUE=$!
for ((i = 0; i < 100; i++)); do [ -e /tmp/rogue-ready ] && break; _tb_sleep 0.05; done

monitor byname broker.lan
monitor bylabel mqtt
monitor bymdns brokerbox.local
monitor nxname nothing.lan
wait_log byname "MQTT: connected to broker.lan:1883" 15 || { dump /tmp/byname.log /tmp/dnsmasq.log; tb_fail "broker.lan: not connected"; }
wait_log bylabel "MQTT: connected to mqtt:1883" 15 || { dump /tmp/bylabel.log /tmp/dnsmasq.log; tb_fail "mqtt (search lan, CNAME): not connected"; }
wait_log nxname "cannot resolve 'nothing.lan': no such name, says 127.0.0.53 (DNS)" 15 || { dump /tmp/nxname.log /tmp/dnsmasq.log; tb_fail "nothing.lan: not said"; }
wait_log bymdns "MQTT: connected to brokerbox.local:1883" 30 || { dump /tmp/bymdns.log /tmp/avahi.log; tb_fail "brokerbox.local: not connected"; }
monitor rogue rogue.local
wait_log rogue "cannot resolve 'rogue.local': no answer to mDNS queries on 224.0.0.251, ff02::fb (answers ignored, RFC 6762: from 10.77.0.1:[0-9]*, not from port 5353)" 30 \
  || { dump /tmp/rogue.log /tmp/rogue-responder.log; tb_fail "rogue.local: the answer from another port than 5353 was not ignored and said"; }
grep -q "answered" /tmp/rogue-responder.log || { dump /tmp/rogue-responder.log; tb_fail "the rogue responder was not asked"; }
grep -q "MQTT: connected to rogue.local" /tmp/rogue.log && { dump /tmp/rogue.log; tb_fail "rogue.local: connected to the rogue's address"; }
kill "$ROGUE" 2>/dev/null
grep -q "query\[A\] mqtt.lan from 127.0.0.1" /tmp/dnsmasq.log || { dump /tmp/dnsmasq.log; tb_fail "mqtt was not asked as mqtt.lan"; }
# Three sessions from 10.77.0.1: the address each name stood for (the broker also listens on 127.0.0.1).
[ "$(grep -c 'New client connected from 10.77.0.1' /tmp/mosquitto.log)" -ge 3 ] || { dump /tmp/mosquitto.log; tb_fail "mosquitto did not see three sessions from 10.77.0.1"; }

# dnsmasq gone: the failure names the server; back-off as for any other cause.
kill "$(cat /tmp/dnsmasq.pid)"
monitor noserver broker.lan
wait_log noserver "cannot resolve 'broker.lan': 127.0.0.53 refused the query" 15 || { dump /tmp/noserver.log; tb_fail "no DNS server: not said"; }
kill "${PIDS[@]}" 2>/dev/null
umount /etc/resolv.conf
tb_pass "broker.lan (DNS, dnsmasq), mqtt (search lan + CNAME) and brokerbox.local (mDNS, avahi-daemon, from this machine's own address) connected (three sessions from 10.77.0.1 in mosquitto's log); rogue.local answered from another port than 5353: ignored and said; nothing.lan: no such name; no server: refused, said; a port in host refused by the check"

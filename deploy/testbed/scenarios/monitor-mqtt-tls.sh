# timeout: 240
# Issue 30, TLS to the broker: `altbeacond monitor` (no adapter needed: its MQTT output runs all the
# same) against Debian's mosquitto with four TLS listeners (a good certificate; an expired one; one
# not valid yet, as a Pi whose clock is not set yet sees one, connected once the clock moves; one that
# asks for a client certificate). Connected and publishing with the right CA and server name;
# refused, said plainly and tried again with a wrong CA, an expired certificate and a wrong server
# name, by the listener that wants a client certificate without one, and by one that never answers
# the handshake (the CONNACK deadline covers it); connected with a client certificate. At
# start: a client key others can read, a CA file that is not PEM, and TLS files without tls = true.
# Both Mbed TLS lines: 2.28 (bookworm) in the x86_64 binary, 3.6 (trixie) in the aarch64 one.
. "$TB_REPO/deploy/testbed/lib.sh"
ip link set lo up
T=/tmp/tls
mkdir -p "$T" && cd "$T" || tb_fail "no $T"

# --- certificates: a CA, another CA, the broker's (valid; expired), a client's ------------------
ossl() { openssl "$@" >>"$T/openssl.log" 2>&1 || { cat "$T/openssl.log"; tb_fail "openssl $1"; }; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 7300 -subj /CN=altbeacond-test-ca
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout other-ca.key -out other-ca.pem -days 30 -subj /CN=another-ca
ossl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj /CN=broker.test
printf 'subjectAltName = DNS:broker.test\n' >san.ext
ossl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile san.ext -out broker.pem
# expired: `openssl ca` takes explicit dates (x509 -req has none in OpenSSL 3.0)
mkdir -p ca-db && : >ca-db/index.txt && echo 1000 >ca-db/serial
printf '[ca]\ndefault_ca = t\n[t]\nunique_subject = no\ndatabase = %s/ca-db/index.txt\nserial = %s/ca-db/serial\nnew_certs_dir = %s/ca-db\ndefault_md = sha256\npolicy = p\ncopy_extensions = copy\n[p]\ncommonName = supplied\n' \
  "$T" "$T" "$T" >ca.cnf
ossl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in broker.csr -out expired.pem \
  -startdate 20200101000000Z -enddate 20200201000000Z -extfile san.ext
# not yet valid: what a Pi whose clock has not been set yet sees of a certificate made today
ossl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in broker.csr -out future.pem \
  -startdate 20370101000000Z -enddate 20370201000000Z -extfile san.ext
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key -out client.csr -subj /CN=monitor
ossl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -out client.pem
chmod 0600 client.key
# mosquitto started by root reads its files as user mosquitto
chmod 0755 "$T" && chmod 0644 broker.key

# --- the broker: plain on 1883 (the test's own view), TLS on 8883, 8884 (expired), 8885 (client
# certificate required) -----------------------------------------------------------------------------
cat >mosquitto.conf <<CONF
allow_anonymous true
listener 1883 127.0.0.1
listener 8883 127.0.0.1
cafile $T/ca.pem
certfile $T/broker.pem
keyfile $T/broker.key
listener 8884 127.0.0.1
cafile $T/ca.pem
certfile $T/expired.pem
keyfile $T/broker.key
listener 8885 127.0.0.1
cafile $T/ca.pem
certfile $T/broker.pem
keyfile $T/broker.key
require_certificate true
listener 8887 127.0.0.1
cafile $T/ca.pem
certfile $T/future.pem
keyfile $T/broker.key
CONF
mosquitto -c mosquitto.conf >mosquitto.log 2>&1 &
broker_pid=$!
for ((i = 0; i < 50; i++)); do mosquitto_sub -t x -W 1 -C 1 >/dev/null 2>&1; [ $? != 27 ] || break; _tb_sleep 0.1; done

# monitor NAME PORT [MQTT LINES...]: a monitor whose broker is 127.0.0.1:PORT, its log /tmp/NAME.log;
# each on an adapter of its own (none is there), so that each has a client ID of its own
PIDS=()
monitor() {
  local name=$1 port=$2 line
  shift 2
  { printf '[monitor]\nadapter = "hci%s"\nnode = "%s"\n[expect.rig]\ntype = "altbeacon"\n' "$((10 + ${#PIDS[@]}))" "$name"
    printf 'uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"\nmajor = 1\nminor = 2\n[mqtt]\nhost = "127.0.0.1"\nport = %s\n' "$port"
    for line in "$@"; do printf '%s\n' "$line"; done; } >"/tmp/$name.toml"
  "$ALTBEACOND_BIN" monitor --config "/tmp/$name.toml" >"/tmp/$name.log" 2>&1 </dev/null &
  PIDS+=($!)
}
wait_log() {  # NAME PATTERN TIMEOUT_S
  local i
  for ((i = 0; i < $3 * 20; i++)); do grep -q "$2" "/tmp/$1.log" && return 0; _tb_sleep 0.05; done
  return 1
}
dump() { for f in "$@"; do echo "--- $f:"; cat "$f"; done; }
tls=('tls = true' "ca_file = \"$T/ca.pem\"" 'server_name = "broker.test"')

# --- refused at start -------------------------------------------------------------------------------
cat >/tmp/notls.toml <<TOML
[monitor]
adapter = "hci7"
[expect.rig]
type = "altbeacon"
uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"
major = 1
minor = 2
[mqtt]
host = "127.0.0.1"
ca_file = "$T/ca.pem"
TOML
"$ALTBEACOND_BIN" monitor --check --config /tmp/notls.toml >/tmp/notls.log 2>&1 && { dump /tmp/notls.log; tb_fail "ca_file without tls accepted"; }
grep -q 'mqtt.ca_file needs mqtt.tls = true' /tmp/notls.log || { dump /tmp/notls.log; tb_fail "ca_file without tls: not said"; }
cp client.key open.key && chmod 0644 open.key
monitor openkey 8885 "${tls[@]}" "cert_file = \"$T/client.pem\"" "key_file = \"$T/open.key\""
wait "${PIDS[-1]}"; rc=$?
[ "$rc" = 78 ] && grep -q "the MQTT client key $T/open.key is open to every user (mode 0644): refused" /tmp/openkey.log \
  || { dump /tmp/openkey.log; tb_fail "a client key every user can read: not refused at start (exit $rc)"; }
printf 'not a certificate\n' >junk.pem
monitor junkca 8883 'tls = true' "ca_file = \"$T/junk.pem\"" 'server_name = "broker.test"'
wait "${PIDS[-1]}"; rc=$?
[ "$rc" = 78 ] && grep -q "cannot use the CA file $T/junk.pem" /tmp/junkca.log \
  || { dump /tmp/junkca.log; tb_fail "a CA file that is not PEM: not refused at start (exit $rc)"; }

# --- connected, and refused at the handshake ------------------------------------------------------
monitor good 8883 "${tls[@]}"
monitor wrongca 8883 'tls = true' "ca_file = \"$T/other-ca.pem\"" 'server_name = "broker.test"'
monitor expired 8884 "${tls[@]}"
monitor future 8887 "${tls[@]}"
monitor wrongname 8883 'tls = true' "ca_file = \"$T/ca.pem\"" 'server_name = "other.test"'
monitor nocert 8885 "${tls[@]}"
# a listener that takes the connection and never answers the ClientHello: the CONNACK deadline
# covers the handshake (no hang)
python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 8886)); s.listen(8)
held = []
while True: held.append(s.accept()[0])' &
silent_pid=$!
for ((i = 0; i < 50; i++)); do (: >/dev/tcp/127.0.0.1/8886) 2>/dev/null && break; _tb_sleep 0.1; done
monitor stall 8886 "${tls[@]}"
monitor withcert 8885 "${tls[@]}" "cert_file = \"$T/client.pem\"" "key_file = \"$T/client.key\""

wait_log good "MQTT: TLS with [Mm]bed TLS [23]\\.[0-9.]*: the broker's certificate checked against $T/ca.pem for broker.test" 5 \
  || { dump /tmp/good.log; tb_fail "good: the TLS setup not said"; }
wait_log good "MQTT: connected to 127.0.0.1:8883 over TLSv1.[23] .*, the certificate of broker.test verified" 15 \
  || { dump /tmp/good.log mosquitto.log; tb_fail "good: not connected over TLS"; }
st=$(mosquitto_sub -t altbeacond/good/status -C 1 -W 5 2>&1)
[ "$st" = online ] || { mosquitto_sub -v -t '#' -W 3 2>&1 | head -20; dump /tmp/good.log; tb_fail "good: no retained status online at the broker ($st)"; }
wait_log withcert "MQTT: connected to 127.0.0.1:8885 over TLS" 15 || { dump /tmp/withcert.log mosquitto.log; tb_fail "withcert: not connected"; }
wait_log wrongca "the broker's certificate is not trusted: the certificate is not correctly signed by the trusted CA" 15 \
  || { dump /tmp/wrongca.log; tb_fail "wrong CA: not said"; }
wait_log expired "the broker's certificate is not trusted: the certificate validity has expired" 15 \
  || { dump /tmp/expired.log; tb_fail "expired certificate: not said"; }
wait_log future "the broker's certificate is not trusted: the certificate validity starts in the future (this machine's clock reads 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]: not set yet? tried again as it moves)" 15 \
  || { dump /tmp/future.log; tb_fail "a certificate not yet valid: not said with the clock"; }
wait_log wrongname "the broker's certificate is not trusted: the certificate Common Name (CN) does not match with the expected CN" 15 \
  || { dump /tmp/wrongname.log; tb_fail "wrong server name: not said"; }
# TLS 1.2 (Mbed TLS 2.28): the broker hangs up in the handshake; TLS 1.3 (3.6): it alerts after it
wait_log nocert "MQTT: 127.0.0.1:8885: .*(does it want a client certificate? cert_file and key_file)" 15 || { dump /tmp/nocert.log mosquitto.log; tb_fail "no client certificate: not said"; }
wait_log stall "MQTT: 127.0.0.1:8886: no answer from the broker within 10 s" 15 || { dump /tmp/stall.log; tb_fail "a silent TLS listener: not said within the CONNACK deadline"; }
# Each refusal is tried again with back-off, said once per cause, and never connects.
_tb_sleep 4
for n in wrongca expired future wrongname nocert stall; do
  ! grep -q 'MQTT: connected' "/tmp/$n.log" || { dump "/tmp/$n.log"; tb_fail "$n connected"; }
  kill -0 "${PIDS[@]}" 2>/dev/null || tb_fail "a monitor exited"
done
# The clock moves (as when a time server first answers a Pi): the monitor refused for a certificate
# not valid yet connects at its next try, unasked (the CA is valid for 20 years, the certificate
# in January 2037, before 2038-01-19: a broker under emulation crashed past it)
date -u -s '2037-01-15 12:00:00' >/dev/null || tb_fail "cannot set the guest's clock"
t0=$(tb_now_ms)
# The broker shares the guest's clock here (on a card it runs elsewhere, its clock right): trixie's
# mosquitto 2.0.21 on aarch64 crashed when the clock jumped to 2040. It is started again, as a
# broker that was there all along, so that what is tested is the monitor's retry.
kill "$broker_pid" 2>/dev/null; wait "$broker_pid" 2>/dev/null
mosquitto -c mosquitto.conf >>mosquitto.log 2>&1 &
broker_pid=$!
wait_log future "MQTT: connected to 127.0.0.1:8887 over TLS" 45 \
  || { dump /tmp/future.log; tb_fail "future: not connected within 45 s of the clock moving"; }
tb_log "future: connected $(( $(tb_now_ms) - t0 )) ms after the clock moved to 2037-01-15 (back-off at most 30 s)"
tb_log "good: $(grep -o 'connected to .*' /tmp/good.log | head -1)"
for n in wrongca expired future wrongname nocert stall; do tb_log "$n: $(grep -m1 -o 'MQTT: 127.*' "/tmp/$n.log")"; done
tb_log "$(grep -m1 -o 'MQTT: TLS .*' /tmp/good.log)"
kill "${PIDS[@]}" "$silent_pid" 2>/dev/null
tb_pass

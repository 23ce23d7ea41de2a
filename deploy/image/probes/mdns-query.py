#!/usr/bin/env python3
"""mdns-query.py NAME.local SOURCE_ADDRESS: asks for NAME.local's IPv4 address by mDNS (RFC 6762,
from port 5353 to 224.0.0.251 on the interface of SOURCE_ADDRESS) and prints "NAME.local=ADDRESS"
for the first answer, or "none" after 10 s (deploy/image/test-image's Wi-Fi boot)."""
import socket
import struct
import sys
import time

name, src = sys.argv[1], sys.argv[2]
qname = b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"
query = struct.pack("!HHHHHH", 0, 0, 1, 0, 0, 0) + qname + struct.pack("!HH", 1, 1)

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 5353))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("224.0.0.251") + socket.inet_aton(src))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(src))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
s.settimeout(1)


def skip_name(d, i):
    while True:
        n = d[i]
        if n == 0:
            return i + 1
        if n & 0xC0 == 0xC0:
            return i + 2
        i += 1 + n


end = time.time() + 10
while time.time() < end:
    s.sendto(query, ("224.0.0.251", 5353))
    t = time.time() + 1
    while time.time() < t:
        try:
            d, peer = s.recvfrom(9000)
        except socket.timeout:
            break
        _, flags, qd, an, _, _ = struct.unpack("!HHHHHH", d[:12])
        if not flags & 0x8000 or an == 0:
            continue
        i = 12
        for _ in range(qd):
            i = skip_name(d, i) + 4
        for _ in range(an):
            i = skip_name(d, i)
            typ, _, _, rdlen = struct.unpack("!HHIH", d[i:i + 10])
            i += 10
            if typ == 1 and rdlen == 4:
                print(f"{name}={socket.inet_ntoa(d[i:i + 4])} from={peer[0]}")
                sys.exit(0)
            i += rdlen
print("none")
sys.exit(1)

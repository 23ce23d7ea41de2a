#!/usr/bin/env python3
"""A one-purpose SNTP server (RFC 4330) for deploy/image/test-image: answers every client request
on 127.0.0.1:PORT (the card reaches it as 10.0.2.2 through qemu's user network) with this host's
clock moved by OFFSET seconds, so that a card whose clock is right before the answer is wrong by
OFFSET after it, and the other way round. Logs one line per answer.

    sntp-server.py PORT OFFSET_S LOG
"""
import socket
import struct
import sys
import time

NTP_EPOCH = 2208988800  # 1900-01-01 to 1970-01-01


def ntp_time(t):
    return struct.pack("!II", int(t) + NTP_EPOCH, int((t % 1) * (1 << 32)))


def answer(request, offset):
    """A server-mode reply to a client-mode request (None for anything else): stratum 2, the
    client's transmit time as the originate time, receive and transmit times now + offset."""
    if len(request) < 48:
        return None
    mode = request[0] & 7
    version = (request[0] >> 3) & 7
    if mode != 3 or version not in (3, 4):
        return None
    now = time.time() + offset
    header = struct.pack("!BBbb", (0 << 6) | (version << 3) | 4, 2, 6, -20)
    root = struct.pack("!II", 0, 0) + b"ABTS"
    return header + root + ntp_time(now - 1) + request[40:48] + ntp_time(now) + ntp_time(now)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    port, offset, log = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", port))
    except OSError as e:
        sys.exit(f"sntp-server: cannot listen on 127.0.0.1:{port}/udp: {e}")
    with open(log, "a", buffering=1) as out:
        out.write(f"listening on 127.0.0.1:{port}/udp, answering the time {offset:+.0f} s\n")
        while True:
            request, peer = s.recvfrom(512)
            reply = answer(request, offset)
            if reply is not None:
                s.sendto(reply, peer)
                out.write(f"answered {peer[0]}:{peer[1]} with {int(time.time() + offset)}\n")


if __name__ == "__main__":
    main()

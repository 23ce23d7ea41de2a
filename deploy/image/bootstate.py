#!/usr/bin/env python3
"""The card's boot state as the host sees it, for deploy/image/test-image (issue 49): the two
16 KiB copies of the U-Boot environment at the start of partition 2 (libubootenv's redundant
form: CRC32, a flag byte, the variables), read from the card image without the card.

    bootstate.py show IMAGE OFFSET        one line per copy: copy N valid|torn flag F vars...,
                                          then "current N" (the newest valid, as libubootenv and
                                          the boot script take it) or "current none"
    bootstate.py tear IMAGE OFFSET WHICH  a write torn by a power cut in copy WHICH (0, 1 or
                                          current): its first sector half old, half new, so its
                                          CRC no longer holds; prints the copy torn

OFFSET: partition 2's first byte in IMAGE.
"""
import struct
import sys
import zlib

COPY = 0x4000


def read_copies(f, offset):
    f.seek(offset)
    raw = f.read(2 * COPY)
    copies = []
    for n in range(2):
        c = raw[n * COPY:(n + 1) * COPY]
        crc, flag = struct.unpack("<I", c[:4])[0], c[4]
        data = c[5:]
        valid = zlib.crc32(data) & 0xFFFFFFFF == crc
        names = [v.decode("latin-1") for v in data.split(b"\0\0")[0].split(b"\0") if v] if valid else []
        copies.append({"valid": valid, "flag": flag, "vars": names})
    return copies


def current(copies):
    """libubootenv's choice for a block device: the one valid copy; of two, copy 1 unless its
    flag is behind copy 0's (0xff then 0 is a wrap)."""
    a, b = copies
    if a["valid"] and b["valid"]:
        if a["flag"] == 0xFF and b["flag"] == 0:
            return 1
        if b["flag"] == 0xFF and a["flag"] == 0:
            return 0
        return 0 if a["flag"] > b["flag"] else 1
    if a["valid"]:
        return 0
    if b["valid"]:
        return 1
    return None


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("show", "tear"):
        sys.exit(__doc__)
    image, offset = sys.argv[2], int(sys.argv[3], 0)
    with open(image, "r+b") as f:
        copies = read_copies(f, offset)
        if sys.argv[1] == "show":
            for n, c in enumerate(copies):
                print(f"copy {n} {'valid' if c['valid'] else 'torn'} flag {c['flag']} " + " ".join(c["vars"]))
            cur = current(copies)
            print(f"current {'none' if cur is None else cur}")
            return 0
        which = sys.argv[4] if len(sys.argv) > 4 else "current"
        n = current(copies) if which == "current" else int(which)
        if n is None:
            sys.exit("bootstate.py: no valid copy to tear")
        # the variables' first bytes as another write would have left them: flipped
        f.seek(offset + n * COPY + 5)
        head = bytearray(f.read(64))
        f.seek(offset + n * COPY + 5)
        f.write(bytes(b ^ 0x5A for b in head))
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())

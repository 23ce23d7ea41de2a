#!/usr/bin/env python3
"""The bytes bundle-server.py sent of one bundle, from its log (issue 49: what an adaptive update
fetched): prints BYTES REQUESTS. A GET without a range counts the whole file.

    bundle-bytes.py LOG NAME
"""
import os
import re
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
log, name = sys.argv[1], sys.argv[2]
size = None
total = requests = 0
for line in open(log, errors="replace"):
    if f'"GET /{name} ' not in line:
        continue
    requests += 1
    m = re.search(r"bytes=(\d+)-(\d+)\s*$", line)
    if m:
        total += int(m.group(2)) - int(m.group(1)) + 1
    elif " 200 " in line:
        if size is None:
            path = os.path.join(os.path.dirname(log), "bundles", name)
            size = os.path.getsize(path) if os.path.exists(path) else 0
        total += size
print(total, requests)

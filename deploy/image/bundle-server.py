#!/usr/bin/env python3
"""Serves update bundles to the image under test (deploy/image/test-image-update.sh) as a web
server of a fleet owner would: GET and HEAD with byte ranges (RAUC streams a bundle over HTTP
with Range requests through nbd: it never stores it). Logs each request, with its range, to
stderr; prints the port it listens on.
  bundle-server.py DIR [ADDRESS]     ADDRESS default 127.0.0.1 (qemu's user network: 10.0.2.2)"""
import http.server
import os
import re
import sys

root = os.path.realpath(sys.argv[1])


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send_file(self, body):
        name = os.path.basename(self.path.split("?", 1)[0])
        path = os.path.join(root, name)
        if not name or not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        first, last, status = 0, size - 1, 200
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "") or "")
        if m and (m.group(1) or m.group(2)):
            if m.group(1):
                first = int(m.group(1))
                last = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:
                first = max(size - int(m.group(2)), 0)
            if first > last or first >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(last - first + 1))
        if status == 206:
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.end_headers()
        if body:
            with open(path, "rb") as f:
                f.seek(first)
                left = last - first + 1
                while left > 0:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    left -= len(chunk)

    def do_GET(self):
        self.send_file(True)

    def do_HEAD(self):
        self.send_file(False)

    def log_message(self, fmt, *args):
        sys.stderr.write("bundle-server: %s %s\n" % (fmt % args, self.headers.get("Range", "")))


server = http.server.ThreadingHTTPServer((sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()

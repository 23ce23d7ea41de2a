"""The generator and judge behind deploy/toml-diff (run that; it builds the decoder)."""
import json
import os
import random
import subprocess
import sys
import tomllib

decoder = sys.argv[1]
N = int(os.environ.get("TOML_DIFF_N", "2000"))
SEED = int(os.environ.get("TOML_DIFF_SEED", "1"))
KEEP = os.environ.get("TOML_DIFF_KEEP")
rng = random.Random(SEED)

BARE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
# Canonically equivalent pairs and other traps: each is a different key in TOML.
UNICODE = ["é", "e\u0301", "K", "\u212a", "Å", "A\u030a", "\u212b", "中文", "ß", "ﬁ", "🙂",
           "\u00a0", "\u0316\u0301", "\u0301\u0316", "Ω", "\u2126", "\u200d", "“", "’"]
WORDS = ["beacon", "major", "minor", "uuid", "power", "bluetooth", "adapter", "leds", "a", "b",
         "true", "false", "inf", "nan", "1", "0x1", "1_0", "-", "_"]


def ws():
    return rng.choice(["", " ", "  ", "\t", " \t"])


def bare_key():
    if rng.random() < 0.3:
        return rng.choice(WORDS)
    return "".join(rng.choice(BARE) for _ in range(rng.randint(1, 6)))


def basic_content():
    out = []
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        if r < 0.35:
            out.append("".join(rng.choice("abc XYZ019#=[].'{}") for _ in range(rng.randint(1, 4))))
        elif r < 0.55:
            out.append(rng.choice(["\\b", "\\t", "\\n", "\\f", "\\r", '\\"', "\\\\"]))
        elif r < 0.7:
            while True:
                v = rng.choice([rng.randint(0, 0x7F), rng.randint(0x80, 0xFFFF), rng.randint(0x10000, 0x10FFFF)])
                if not 0xD800 <= v <= 0xDFFF:
                    break
            out.append(f"\\u{v:04X}" if v <= 0xFFFF and rng.random() < 0.7 else f"\\U{v:08x}")
        elif r < 0.9:
            out.append(rng.choice(UNICODE))
        else:
            out.append("\t")
    return "".join(out)


def literal_content():
    return "".join(rng.choice(["a", " ", "\\", '"', "#", "=", "\t", "\\n"] + UNICODE) for _ in range(rng.randint(0, 6)))


def key_part():
    r = rng.random()
    if r < 0.6:
        return bare_key()
    if r < 0.85:
        return '"' + basic_content() + '"'
    return "'" + literal_content() + "'"


def key():
    parts = [key_part() for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    return (ws() + "." + ws()).join(parts) if rng.random() < 0.3 else ".".join(parts)


def integer():
    r = rng.random()
    if r < 0.1:
        return rng.choice(["0", "+0", "-0", "9223372036854775807", "-9223372036854775808", "+9_223_372_036_854_775_807"])
    n = rng.choice([rng.randint(0, 9), rng.randint(0, 70000), rng.randint(0, 2**63 - 1)])
    if r < 0.6:
        s = str(n)
        if len(s) > 1 and rng.random() < 0.4:   # underscores between digits
            i = rng.randint(1, len(s) - 1)
            s = s[:i] + "_" + s[i:]
        return rng.choice(["", "+", "-"]) + s
    base, prefix = rng.choice([(16, "0x"), (8, "0o"), (2, "0b")])
    digits = {16: format(n, "x"), 8: format(n, "o"), 2: format(n, "b")}[base]
    if base == 16 and rng.random() < 0.5:
        digits = digits.upper()
    if len(digits) > 1 and rng.random() < 0.3:
        i = rng.randint(1, len(digits) - 1)
        digits = digits[:i] + "_" + digits[i:]
    return prefix + digits


def value():
    r = rng.random()
    if r < 0.35:
        return '"' + basic_content() + '"'
    if r < 0.5:
        return "'" + literal_content() + "'"
    if r < 0.85:
        return integer()
    return rng.choice(["true", "false"])


def comment():
    return "#" + "".join(rng.choice(["", " ", "a", "é", "#", "\t", '"', "=", "中"]) for _ in range(rng.randint(0, 5)))


def subset_doc():
    lines = []
    for _ in range(rng.randint(0, 4)):
        lines.append(ws() + key() + ws() + "=" + ws() + value() + ws() + (comment() if rng.random() < 0.2 else ""))
    for _ in range(rng.randint(0, 4)):
        if rng.random() < 0.2:
            lines.append(ws() + comment())
        if rng.random() < 0.2:
            lines.append("")
        lines.append(ws() + "[" + ws() + key() + ws() + "]" + ws() + (comment() if rng.random() < 0.2 else ""))
        for _ in range(rng.randint(0, 4)):
            lines.append(ws() + key() + ws() + "=" + ws() + value() + ws() + (comment() if rng.random() < 0.2 else ""))
    eol = rng.choice(["\n", "\n", "\r\n"])
    text = eol.join(lines) + (eol if rng.random() < 0.8 else "")
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text.encode("utf-8")


OUTSIDE = ["k = [1, 2]", "k = []", "k = {a = 1}", "k = {}", "k = 1.5", "k = -0.0", "k = 1e3", "k = inf",
           "k = -nan", "k = 1979-05-27", "k = 07:32:00", "k = 1979-05-27T07:32:00Z", "k = 1979-05-27 07:32:00",
           'k = """multi"""', "k = '''lit'''", 'k = """\nline\n"""', "[[arr]]", "[[a.b]]", 'k = "\\e"',
           'k = "\\x41"', "k = 0xFFFFFFFFFFFFFFFF", "k = 99999999999999999999", "k = 1_000.5", "k = +inf"]


def near_doc():
    lines = subset_doc().decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    i = rng.randint(0, len(lines))
    lines.insert(i, rng.choice(OUTSIDE))
    return "\n".join(lines).encode("utf-8")


NOISE = [b'"', b"'", b"=", b"[", b"]", b".", b"#", b"\\", b"\n", b"\r", b"\r\n", b"\t", b" ", b"\x00",
         b"\x1b", b"\x7f", b"\xc3", b"\xff", b"\xed\xa0\x80", "é".encode(), "\u0301".encode(), b"_", b"0x",
         b"+", b"-", b"1", b"true", b'"""', b"\\u", b"\\U0011FFFF", b"\\uD800", b"[[", b"{", b"e", b":"]


def malformed_doc():
    b = bytearray(subset_doc())
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        pos = rng.randint(0, len(b))
        if op < 0.5:
            b[pos:pos] = rng.choice(NOISE)
        elif op < 0.75 and b:
            del b[pos:pos + rng.randint(1, 3)]
        elif b:
            b[pos:pos + 1] = bytes([rng.randint(0, 255)])
    return bytes(b)


def tagged(v):
    if isinstance(v, bool):
        return {"type": "bool", "value": "true" if v else "false"}
    if isinstance(v, int):
        return {"type": "integer", "value": str(v)}
    if isinstance(v, str):
        return {"type": "string", "value": v}
    if isinstance(v, dict):
        return {k: tagged(x) for k, x in v.items()}
    return {"type": "outside-subset", "value": repr(v)}


def by_tomllib(doc):
    if doc.startswith(b"\xef\xbb\xbf"):
        doc = doc[3:]
    try:
        return tagged(tomllib.loads(doc.decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError):
        return None


def by_decoder(doc):
    try:
        p = subprocess.run([decoder], input=doc, capture_output=True, timeout=5)
    except subprocess.TimeoutExpired:
        return "crash", "timeout"
    if p.returncode == 0:
        try:
            return "ok", json.loads(p.stdout.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            return "crash", f"bad JSON: {e}"
    if p.returncode == 1 and p.stderr:
        return "refused", p.stderr.decode("utf-8", "replace")
    return "crash", f"exit {p.returncode}: {p.stderr[-200:]!r}"


counts = {k: 0 for k in ["subset", "subset valid (tomllib accepts)", "near", "malformed", "tomllib accepts", "decoder accepts", "both accept",
                         "both refuse", "invalid accepted", "misread", "subset refused", "crash",
                         "outside subset refused without 'not supported'"]}
shown = 0


def fail(kind, doc, detail):
    global shown
    counts[kind] += 1
    if shown < 5:
        print(f"{kind}: {doc!r}\n    {detail}")
        shown += 1
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
        with open(os.path.join(KEEP, f"{kind.replace(' ', '-')}-{counts[kind]}.toml"), "wb") as f:
            f.write(doc)


for i in range(N):
    kind = rng.choice(["subset", "subset", "near", "malformed", "malformed"])
    doc = {"subset": subset_doc, "near": near_doc, "malformed": malformed_doc}[kind]()
    counts[kind] += 1
    want = by_tomllib(doc)
    outcome, got = by_decoder(doc)
    counts["tomllib accepts"] += want is not None
    counts["subset valid (tomllib accepts)"] += kind == "subset" and want is not None
    counts["decoder accepts"] += outcome == "ok"
    if outcome == "crash":
        fail("crash", doc, got)
    elif outcome == "ok" and want is None:
        fail("invalid accepted", doc, json.dumps(got, ensure_ascii=False)[:300])
    elif outcome == "ok":
        counts["both accept"] += 1
        if got != want:
            fail("misread", doc, f"decoder {json.dumps(got, ensure_ascii=False)[:200]} tomllib {json.dumps(want, ensure_ascii=False)[:200]}")
    elif want is None:
        counts["both refuse"] += 1
    elif kind == "subset":
        fail("subset refused", doc, got.splitlines()[0] if got else "")
    elif kind == "near" and "not supported in this config file" not in got:
        counts["outside subset refused without 'not supported'"] += 1
        if os.environ.get("TOML_DIFF_VERBOSE") == "1":
            print(f"  (outside subset, refused as: {got.splitlines()[0] if got else ''})")

print(f"toml-diff: {N} documents, seed {SEED}, tomllib {sys.version.split()[0]}")
for k, v in counts.items():
    print(f"  {k}: {v}")
bad = counts["invalid accepted"] + counts["misread"] + counts["subset refused"] + counts["crash"]
print("toml-diff: " + ("PASS" if bad == 0 else f"FAIL ({bad} disagreements)"))
sys.exit(1 if bad else 0)

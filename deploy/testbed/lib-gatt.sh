# shellcheck shell=bash
# Helpers for the GATT identity scenarios (SPEC §3): the bytes worked out by hand from SPEC §3,
# a central on hci1 (BlueZ's gatttool), and a log of what hci1 hears while it reads.

# Flags, then 0x11 bytes of Complete List of 128-bit Service UUIDs (07): the service
# 8C422626-0C6E-4B86-8EC7-9147B233D97E least significant byte first.
TBG_ADV=02010611077ed933b24791c78e864b6e0c2626428c
# The scan response for name "AltBeacon": length 10, Complete Local Name (09), the name's bytes.
TBG_RSP=0a09416c74426561636f6e
TBG_CHAR=a05f9df4-9d54-4600-9224-983b75b9d154
TBG_SERVICE=8c422626-0c6e-4b86-8ec7-9147b233d97e
# The central's controller (hci2 when hci1 keeps observing: see session-lib.sh's tbs_btvirt3).
TBG_CENTRAL=${TBG_CENTRAL:-hci1}

# tbg_addr: hci0's public address (the beacon's)
tbg_addr() { hciconfig hci0 | awk '/BD Address/ {print $3}'; }

# tbg_hex TEXT: TEXT's bytes as gatttool prints a value ("61 62 63")
tbg_hex() { printf '%s' "$1" | od -An -tx1 -v | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

# tbg_read_identity: what the library does, with gatttool on $TBG_CENTRAL: find the service by UUID,
# its characteristics, read the first (a long read: Read, then Read Blob); prints the value's
# bytes as gatttool does; fails when any step does
tbg_read_identity() {
  local addr range start end chars handle
  addr=$(tbg_addr)
  range=$(timeout 20 gatttool -i "$TBG_CENTRAL" -b "$addr" -t public --primary --uuid="$TBG_SERVICE") || return 1
  start=$(awk '{print $3}' <<<"$range"); end=$(awk '{print $6}' <<<"$range")
  [ -n "$start" ] && [ -n "$end" ] || { echo "service not found: $range" >&2; return 1; }
  # "Starting handle: 0007 Ending handle: 0009" (hex without 0x); -s/-e take decimal
  chars=$(timeout 20 gatttool -i "$TBG_CENTRAL" -b "$addr" -t public --characteristics -s $((16#$start)) -e $((16#$end))) || return 1
  # "handle = 0x0008, char properties = 0x02, char value handle = 0x0009, uuid = a05f9df4-..."
  handle=$(grep -m1 "uuid = $TBG_CHAR" <<<"$chars" | sed 's/.*char value handle = \(0x[0-9a-f]*\),.*/\1/')
  [ -n "$handle" ] || { echo "characteristic not found: $chars" >&2; return 1; }
  timeout 20 gatttool -i "$TBG_CENTRAL" -b "$addr" -t public --char-read -a "$handle" | sed 's/^Characteristic value\/descriptor: //; s/ *$//'
}

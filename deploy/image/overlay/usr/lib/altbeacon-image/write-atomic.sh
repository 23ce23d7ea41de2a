# The image's scripts' one way to write a file (issue 49); sourced, POSIX sh. Not for the FAT
# (boot-files.sh: its own remounts and sync; a FAT keeps no modes).
# write_atomic PATH MODE: stdin into PATH, whole or not at all (issue 49: the scripts' one way to
# write a file): a temporary file beside it, flushed to the device (fsync), its mode set (never
# the umask's), renamed over PATH, the directory flushed so the rename survives a power cut too.
# Fails (1) leaving PATH as it was.
write_atomic() {
  wa_tmp=$(dirname "$1")/.$(basename "$1").$$
  if cat >"$wa_tmp" && chmod "$2" "$wa_tmp" && sync "$wa_tmp" && mv -f "$wa_tmp" "$1"; then
    sync "$(dirname "$1")" 2>/dev/null || true
    return 0
  fi
  rm -f "$wa_tmp"; return 1
}

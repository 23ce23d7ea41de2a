# Shared by the image's scripts that read what a PC wrote on the boot partition (FAT) or write
# there (docs/image.md); sourced, POSIX sh.
. "${ALTBEACON_LIB:-/usr/lib/altbeacon-image}/write-atomic.sh"

# strip_bom_cr FILE: FILE on stdout without a UTF-8 byte-order mark and without CRs (Windows
# editors write both: the mark would stick to the first word, a CR to the end of every line)
strip_bom_cr() { sed '1s/^\xef\xbb\xbf//' "$1" | tr -d '\r'; }

# The FAT is mounted read-only (etc/fstab), so that a power cut never catches it half-written; a
# write opens it for that moment only:  fat_rw DIR && WRITES; fat_ro DIR
# fat_state: closed; remounted (fat_rw made it read-write); writable (it already was, or DIR is
# no mount point, as in the host-side tests: left as it is)
fat_state=closed
# One writer at a time (flock on descriptor 9, held from fat_rw to fat_ro): the imports, the
# update's set-aside bundles and the boot settings can run at once, and one must not remount the
# FAT read-only under another's write. A holder stuck for 2 minutes is not waited for longer.
fat_lock=${ALTBEACON_FAT_LOCK:-/run/altbeacon-fat.lock}
fat_locked=no
fat_take_lock() {
  [ -w "${fat_lock%/*}" ] && command -v flock >/dev/null 2>&1 || return 0
  exec 9>>"$fat_lock" && fat_locked=yes && { flock -w 120 9 || true; }
}
fat_release_lock() {
  [ "$fat_locked" = yes ] || return 0
  fat_locked=no
  flock -u 9 2>/dev/null
  exec 9>&-
}
# fat_rw DIR: DIR's file system read-write if it is mounted read-only (sync: each write goes
# straight to the card); 1 when that remount fails (mount says why)
fat_rw() {
  [ "$fat_state" = closed ] || return 0
  fat_take_lock
  if findmnt -n -o OPTIONS --mountpoint "$1" 2>/dev/null | grep -Eq '(^|,)ro(,|$)'; then
    mount -o remount,rw,sync "$1" || { fat_release_lock; return 1; }
    fat_state=remounted
  else
    fat_state=writable
  fi
}
# fat_remounted: true when fat_rw made it read-write (and fat_ro makes it read-only again)
fat_remounted() { [ "$fat_state" = remounted ]; }
# fat_ro DIR: what was written flushed to the card, DIR read-only again if fat_rw made it
# read-write; 1 when that remount fails
fat_ro() {
  [ "$fat_state" != closed ] || return 0
  sync -f "$1/." 2>/dev/null || sync
  fat_was=$fat_state
  fat_state=closed
  fat_rc=0
  [ "$fat_was" != remounted ] || mount -o remount,ro "$1" || fat_rc=1
  fat_release_lock
  return $fat_rc
}

# Shared by the image's scripts that read what a PC wrote on the boot partition (FAT) or write
# there (docs/image.md); sourced, POSIX sh.

# strip_bom_cr FILE: FILE on stdout without a UTF-8 byte-order mark and without CRs (Windows
# editors write both: the mark would stick to the first word, a CR to the end of every line)
strip_bom_cr() { sed '1s/^\xef\xbb\xbf//' "$1" | tr -d '\r'; }

# The FAT is mounted read-only (etc/fstab), so that a power cut never catches it half-written; a
# write opens it for that moment only:  fat_rw DIR && WRITES; fat_ro DIR
# fat_state: closed; remounted (fat_rw made it read-write); writable (it already was, or DIR is
# no mount point, as in the host-side tests: left as it is)
fat_state=closed
# fat_rw DIR: DIR's file system read-write if it is mounted read-only (sync: each write goes
# straight to the card); 1 when that remount fails (mount says why)
fat_rw() {
  [ "$fat_state" = closed ] || return 0
  if findmnt -n -o OPTIONS --mountpoint "$1" 2>/dev/null | grep -Eq '(^|,)ro(,|$)'; then
    mount -o remount,rw,sync "$1" || return 1
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
  [ "$fat_was" = remounted ] || return 0
  mount -o remount,ro "$1"
}

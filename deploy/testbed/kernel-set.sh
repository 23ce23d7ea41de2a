# shellcheck shell=bash
# The testbed's kernel as a set apt offers today (sourced by deploy/testbed/prepare and
# deploy/check-archive): linux-image-amd64's kernel, its headers, the kbuild they depend on and
# the linux-source the gpio-sim module is built from. No version is pinned: Debian's security
# archive withdraws old revisions, and moves kbuild and linux-source a revision ahead of the image
# at times (6.1.192-3 beside the image's 6.1.192-2), so each package is taken at its candidate and
# the set is checked to go together (the headers' "linux-kbuild-X (>= V)").
#   kernel_set_resolve   sets KSET_ABI, KSET_IMAGE_VERSION, KSET_KBUILD, KSET_SOURCE, KSET_PKGS
#                        (NAME=VERSION each), KSET_KEY (the cache's key), KSET_DESC; on failure
#                        returns 1 with KSET_ERROR naming the package and the version asked for
#   kernel_set_download DIR   apt-get download of KSET_PKGS into DIR
# ALTBEACOND_TESTBED_KERNEL_VERSION asks for linux-image-amd64 at that version instead.

# apt_candidate NAME: the version apt would install, or nothing
apt_candidate() {
  apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" && $2 != "(none)" && !n++ {print $2}'
}
# apt_offers NAME VERSION: true when apt's lists hold NAME at VERSION
# (apt-cache show exits 0 with nothing printed for a version it does not know; no grep -q, whose
# early exit fails the pipe under pipefail)
apt_offers() { [ -n "$(apt-cache show "$1=$2" 2>/dev/null | sed -n '/^Package:/p')" ]; }

kernel_set_resolve() {
  local meta hdr common series kb need src v
  KSET_ERROR=""
  meta=${ALTBEACOND_TESTBED_KERNEL_VERSION:-$(apt_candidate linux-image-amd64)}
  if [ -z "$meta" ] || ! apt_offers linux-image-amd64 "$meta"; then
    KSET_ERROR="apt offers no linux-image-amd64${meta:+ at version $meta} (apt-get update?)"
    return 1
  fi
  KSET_ABI=$(apt-cache show "linux-image-amd64=$meta" | sed -n 's/^Depends:.*linux-image-\([0-9][^ ,]*\)-amd64 .*/\1/p' | head -1)
  [ -n "$KSET_ABI" ] || { KSET_ERROR="cannot tell the kernel ABI of linux-image-amd64=$meta"; return 1; }
  series=$(echo "$KSET_ABI" | cut -d. -f1,2)
  KSET_PKGS=()
  for p in "linux-image-$KSET_ABI-amd64" "linux-headers-$KSET_ABI-amd64" "linux-headers-$KSET_ABI-common"; do
    v=$(apt_candidate "$p")
    [ -n "$v" ] || { KSET_ERROR="apt offers no $p (asked for by linux-image-amd64=$meta)"; return 1; }
    KSET_PKGS+=("$p=$v")
    case "$p" in linux-image-*) KSET_IMAGE_VERSION=$v ;; linux-headers-*-amd64) hdr=$p=$v ;; esac
  done
  KSET_KBUILD=linux-kbuild-$series
  kb=$(apt_candidate "$KSET_KBUILD")
  [ -n "$kb" ] || { KSET_ERROR="apt offers no $KSET_KBUILD (asked for by ${hdr%%=*})"; return 1; }
  # what the headers ask of kbuild, e.g. "linux-kbuild-6.1 (>= 6.1.192-2)"
  need=$(apt-cache show "$hdr" | sed -n "s/^Depends:.*$KSET_KBUILD (>= \([^)]*\)).*/\1/p" | head -1)
  if [ -n "$need" ] && ! dpkg --compare-versions "$kb" ge "$need"; then
    KSET_ERROR="$KSET_KBUILD: ${hdr%%=*} needs version >= $need, apt offers $kb"
    return 1
  fi
  KSET_PKGS+=("$KSET_KBUILD=$kb")
  # the source the running kernel was built from when it is still offered, else the newest
  KSET_SOURCE=linux-source-$series
  if apt_offers "$KSET_SOURCE" "$KSET_IMAGE_VERSION"; then src=$KSET_IMAGE_VERSION; else src=$(apt_candidate "$KSET_SOURCE"); fi
  [ -n "$src" ] || { KSET_ERROR="apt offers no $KSET_SOURCE (the gpio-sim module's source)"; return 1; }
  KSET_PKGS+=("$KSET_SOURCE=$src")
  KSET_KEY=$KSET_IMAGE_VERSION
  [ "$kb" = "$KSET_IMAGE_VERSION" ] || KSET_KEY+="+kbuild-$kb"
  [ "$src" = "$KSET_IMAGE_VERSION" ] || KSET_KEY+="+source-$src"
  KSET_DESC="linux-image-amd64 $meta: ${KSET_PKGS[*]}"
}

kernel_set_download() {
  (cd "$1" && apt-get download -q "${KSET_PKGS[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2; exit "${PIPESTATUS[0]}")
}

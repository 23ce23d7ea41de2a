# shellcheck shell=bash
# The arm64 build and test environment (SPEC §9), shared by deploy/build-arm64, deploy/test and the
# aarch64 testbed: a Debian trixie arm64 chroot made with mmdebstrap and run under qemu-user
# through binfmt_misc. The chroot is a cache outside the repo; the repo is bound into it at /src.
# Environment:
#   ALTBEACOND_ARM64_CACHE   cache directory (default $HOME/.cache/altbeacond-arm64)
#   ALTBEACOND_ARM64_SUITE   Debian suite of the chroot (default trixie: it ships swiftlang 6.0.3)
#   ALTBEACOND_ARM64_MIRROR  Debian mirror (default http://deb.debian.org/debian)

ARM64_CACHE=${ALTBEACOND_ARM64_CACHE:-$HOME/.cache/altbeacond-arm64}
ARM64_SUITE=${ALTBEACOND_ARM64_SUITE:-trixie}
ARM64_MIRROR=${ALTBEACOND_ARM64_MIRROR:-http://deb.debian.org/debian}
ARM64_CHROOT=$ARM64_CACHE/chroot
# What the chroot holds: the Swift toolchain and the static libraries for the build; a kernel
# toolchain for hci_vhci/gpio-sim; the testbed's userland (BlueZ tools and emulator, libgpiod tools,
# busybox for the initramfs). Changing this list rebuilds the chroot.
ARM64_PACKAGES=(
  swiftlang libbluetooth-dev libgpiod-dev libmbedtls-dev libc6-dev libstdc++-14-dev file binutils gcc make
  linux-headers-arm64 kmod xz-utils
  bluez bluez-test-tools gpiod rfkill util-linux procps busybox-static python3-minimal
  # the health and monitor scenarios (SPEC §10): the broker and its clients, node_exporter, curl,
  # python3's json (promtool, 100 MB of prometheus, is checked on x86_64 only); openssl makes the
  # TLS scenario's certificates
  mosquitto mosquitto-clients prometheus-node-exporter curl python3 iproute2 openssl
  # the image's Wi-Fi boot (deploy/image/test-image wifi): the access point and its DHCP server
  # on the second mac80211_hwsim radio, inside the guest
  hostapd dnsmasq-base iw
)

arm64_log() { echo "arm64: $*" >&2; }
arm64_die() { echo "arm64: error: $*" >&2; exit 1; }

# timed_step LOG NAME CMD...: runs CMD and says through the function LOG how long it took
# ("step NAME: 12 s", ", FAILED (rc)" added when it failed); returns CMD's status
timed_step() {
  local log=$1 name=$2 t0 rc=0
  shift 2
  t0=$(date +%s)
  "$@" || rc=$?
  "$log" "step $name: $(( $(date +%s) - t0 )) s$([ "$rc" = 0 ] || echo ", FAILED ($rc)")"
  return "$rc"
}
# arm64_step NAME CMD...: "arm64: step NAME: 12 s"
arm64_step() { timed_step arm64_log "$@"; }

# arm64_binfmt: aarch64 executables run here through qemu-user (binfmt_misc). bookworm's qemu-user
# 7.2 deadlocks now and then in a child forked by a multithreaded program (swift-build's compiler
# spawns hang in a futex for good), so the static qemu-aarch64 of qemu-user 10 from
# bookworm-backports is unpacked into the cache (private apt lists: the host's apt configuration
# is not touched) and registered as its own binfmt entry, which the kernel tries before Debian's.
ARM64_QEMU_SUITE=${ALTBEACOND_ARM64_QEMU_SUITE:-bookworm-backports}
arm64_binfmt() { arm64_locked qemu arm64_binfmt_locked; }
# arm64_qemu_fetch: only the cache fill of arm64_binfmt (deploy/test-caches races it)
arm64_qemu_fetch() { arm64_locked qemu arm64_qemu_fetch_locked; }
arm64_qemu_fetch_locked() {
  local q="$ARM64_CACHE/qemu"
  if [ ! -x "$q/root/usr/bin/qemu-aarch64" ]; then
    local a="$q/apt" opts
    rm -rf "$q" && mkdir -p "$a/lists/partial" "$a/parts" "$a/cache/archives/partial" "$q/debs"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $ARM64_MIRROR $ARM64_QEMU_SUITE main" >"$a/sources.list"
    opts=(-o "Dir::Etc::SourceList=$a/sources.list" -o "Dir::Etc::SourceParts=$a/parts" -o "Dir::State::Lists=$a/lists"
          -o "Dir::Cache=$a/cache" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=$(id -un)")
    arm64_log "fetching qemu-user from $ARM64_QEMU_SUITE (static qemu-aarch64)"
    apt-get "${opts[@]}" -q update >&2 && (cd "$q/debs" && apt-get "${opts[@]}" -q download qemu-user >&2) \
      || arm64_die "cannot download qemu-user from $ARM64_QEMU_SUITE"
    dpkg-deb -x "$q"/debs/qemu-user_*.deb "$q/root" && rm -rf "$q/debs" "$a"
    file "$q/root/usr/bin/qemu-aarch64" | grep -q 'static' || arm64_die "$q/root/usr/bin/qemu-aarch64 is not static"
  fi
}
arm64_binfmt_locked() {
  local sudo="" q="$ARM64_CACHE/qemu" reg=/proc/sys/fs/binfmt_misc entry=altbeacond-aarch64
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  if [ ! -e "$reg/register" ]; then
    $sudo mount -t binfmt_misc binfmt_misc "$reg" \
      || arm64_die "cannot mount binfmt_misc (needed to run aarch64 programs under qemu-user)"
  fi
  arm64_qemu_fetch_locked
  local interp="$q/root/usr/bin/qemu-aarch64"
  if ! grep -qx "interpreter $interp" "$reg/$entry" 2>/dev/null; then
    [ ! -e "$reg/$entry" ] || echo -1 | $sudo tee "$reg/$entry" >/dev/null
    # ELF64, little endian, EM_AARCH64 (Debian's qemu-aarch64 magic and mask); F: the interpreter
    # is opened now, so it works inside chroots; P: argv[0] is kept
    printf ':%s:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:%s:FP\n' \
      "$entry" "$interp" | $sudo tee "$reg/register" >/dev/null || arm64_die "cannot register $interp with binfmt_misc"
  fi
  arch-test arm64 >/dev/null 2>&1 \
    || arm64_die "aarch64 programs do not run here (binfmt_misc with $interp)"
}

# arm64_locked NAME CMD...: runs CMD (in a subshell) holding $ARM64_CACHE/.NAME.lock, so that two
# callers filling the same cache at once (deploy/test's background preparation and a step, the
# image's two cards) take turns: the second finds the stamp the first wrote
arm64_locked() {
  local name=$1
  shift
  mkdir -p "$ARM64_CACHE"
  ( exec {fd}>"$ARM64_CACHE/.$name.lock"; flock "$fd"; "$@" )
}

# arm64_chroot_ensure: makes the chroot once (mmdebstrap); later calls only check its stamp
arm64_chroot_ensure() {
  [ "$ARM64_SUITE ${ARM64_PACKAGES[*]}" = "$(cat "$ARM64_CHROOT/.altbeacond-stamp" 2>/dev/null)" ] && return 0
  arm64_locked chroot arm64_chroot_ensure_locked
}
arm64_chroot_ensure_locked() {
  local want have tmp
  want="$ARM64_SUITE ${ARM64_PACKAGES[*]}"
  have=$(cat "$ARM64_CHROOT/.altbeacond-stamp" 2>/dev/null || true)
  [ "$want" = "$have" ] && return 0
  mkdir -p "$ARM64_CACHE"
  if [ "${have%% *}" = "$ARM64_SUITE" ] && [ -x "$ARM64_CHROOT/usr/bin/apt-get" ]; then
    # same suite, other packages: install what is missing instead of starting again
    arm64_log "adding packages to the chroot: ${ARM64_PACKAGES[*]}"
    if arm64_in_chroot "export DEBIAN_FRONTEND=noninteractive INITRD=No; apt-get install -y -q --no-install-recommends ${ARM64_PACKAGES[*]} \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends ${ARM64_PACKAGES[*]}; }" >&2; then
      echo "$want" >"$ARM64_CHROOT/.altbeacond-stamp"
      return 0
    fi
    arm64_log "could not add the packages: making the chroot again"
  fi
  tmp="$ARM64_CACHE/chroot.new"
  arm64_umount_all "$tmp"
  rm -rf "$tmp"
  arm64_log "making the $ARM64_SUITE arm64 chroot (mmdebstrap; a few minutes): $ARM64_CHROOT"
  local inc
  inc=$(IFS=,; echo "${ARM64_PACKAGES[*]}")
  # the host's apt sources are never touched: mmdebstrap fetches the suite into the chroot only.
  # The package lists are kept so that later steps can apt-get download the kernel packages.
  # INITRD=No: the kernel that linux-headers-arm64 pulls in needs no initramfs here (saves minutes)
  INITRD=No mmdebstrap --quiet --mode=root --arch=arm64 --variant=apt --include="$inc" \
    --skip=cleanup/apt/lists --aptopt='Acquire::Retries "3"' \
    "$ARM64_SUITE" "$tmp" "$ARM64_MIRROR" >&2 || arm64_die "mmdebstrap failed"
  echo "$want" >"$tmp/.altbeacond-stamp"
  arm64_umount_all "$ARM64_CHROOT"
  rm -rf "$ARM64_CHROOT"
  mv "$tmp" "$ARM64_CHROOT"
}

# The cross toolchain: an amd64 trixie chroot with the same swiftlang 6.0.3, building for aarch64
# against the arm64 chroot (its glibc, static libraries and Swift runtime) at native speed: the
# compiler under qemu-user took 14 min for the release build and as long for the tests, natively
# about a minute each. Changing this list rebuilds it.
ARM64_CROSS=$ARM64_CACHE/cross
ARM64_CROSS_PACKAGES=(swiftlang libc6-dev libstdc++-14-dev binutils-aarch64-linux-gnu file)

# arm64_cross_ensure: makes the cross chroot once (mmdebstrap, amd64: no emulation)
arm64_cross_ensure() { arm64_locked cross arm64_cross_ensure_locked; }
arm64_cross_ensure_locked() {
  arm64_root_make "$ARM64_CROSS" amd64 "$ARM64_SUITE ${ARM64_CROSS_PACKAGES[*]}" \
    "the $ARM64_SUITE amd64 cross toolchain (mmdebstrap; about a minute)" "${ARM64_CROSS_PACKAGES[@]}"
}

# arm64_root_make DEST ARCH STAMP WHAT PACKAGES...: an $ARM64_SUITE root of ARCH made with
# mmdebstrap (--variant=apt) into DEST.new and renamed over DEST whole, unless DEST's stamp is
# STAMP already; WHAT names it in the log. The caller holds DEST's lock.
arm64_root_make() {
  local dest=$1 arch=$2 stamp=$3 what=$4 tmp inc
  shift 4
  [ "$(cat "$dest/.altbeacond-stamp" 2>/dev/null)" = "$stamp" ] && return 0
  tmp="$dest.new"
  arm64_umount_all "$tmp"
  rm -rf "$tmp"
  arm64_log "making $what: $dest"
  inc=$(IFS=,; echo "$*")
  mmdebstrap --quiet --mode=root --arch="$arch" --variant=apt --include="$inc" \
    --aptopt='Acquire::Retries "3"' "$ARM64_SUITE" "$tmp" "$ARM64_MIRROR" >&2 || arm64_die "mmdebstrap ($what) failed"
  echo "$stamp" >"$tmp/.altbeacond-stamp"
  arm64_umount_all "$dest"
  rm -rf "$dest"
  mv "$tmp" "$dest"
}

# arm64_cross SCRIPT: runs bash SCRIPT in the cross chroot, in /src (the repo, at the same path as
# in the arm64 chroot, so that #filePath agrees), with the arm64 chroot read-only at /sysroot and
# TRIPLE/SYSROOT/STRIP set for deploy/build-static.
arm64_cross() {
  arm64_session "$ARM64_CROSS" arm64_cross_mounts "$1" \
    TRIPLE=aarch64-unknown-linux-gnu SYSROOT=/sysroot STRIP=aarch64-linux-gnu-strip
}
arm64_cross_mounts() { # ROOT REPO
  mkdir -p "$1/sysroot" && mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && mount --make-rslave "$1/dev" \
    && mount --bind "$2" "$1/src" && mount --bind "$ARM64_CHROOT" "$1/sysroot" && mount -o remount,bind,ro "$1/sysroot"
}

# arm64_umount_all DIR: unmounts everything below DIR (left over by an interrupted run)
arm64_umount_all() {
  local m
  [ -d "$1" ] || return 0
  for m in $(awk -v d="$1/" 'index($2 "/", d) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

# arm64_in_chroot SCRIPT: runs bash SCRIPT in the chroot as root, in /src (the repo), with /proc,
# /sys and /dev mounted.
arm64_in_chroot() { arm64_session "$ARM64_CHROOT" arm64_chroot_mounts "$1"; }
arm64_chroot_mounts() { # ROOT REPO
  mount -t proc proc "$1/proc" && mount -t sysfs sys "$1/sys" \
    && mount --rbind /dev "$1/dev" && mount --make-rslave "$1/dev" && mount --bind "$2" "$1/src"
}

# arm64_session ROOT MOUNTS SCRIPT [VAR=VALUE...]: runs bash SCRIPT as root in the chroot ROOT, in
# /src, after the function MOUNTS (ROOT REPO) mounted what it needs, with a clean environment plus
# the VARs; watched by arm64_guarded. Every chroot run takes one lock (concurrent callers take
# turns), and ROOT's mounts are undone before (an interrupted run's) and after.
arm64_session() {
  local root=$1 mounts=$2 script=$3 repo rc=0
  shift 3
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  (
    exec 8>"$ARM64_CACHE/.chroot-lock"
    flock 8
    arm64_umount_all "$root"
    mkdir -p "$root/src"
    trap 'arm64_umount_all "$root"' EXIT
    "$mounts" "$root" "$repo" || arm64_die "cannot mount into $root"
    arm64_guarded chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" \
      /bin/bash -c "cd /src && $script"
  ) || rc=$?
  return "$rc"
}

# arm64_guarded CMD...: runs CMD in a session of its own and watches the CPU time of everything in
# that session. Emulated programs that deadlock (see arm64_binfmt) sit at zero CPU for good: after
# ARM64_STALL_S (default 240) seconds without any progress the session is killed and CMD runs again
# (builds are incremental), twice at most. Returns CMD's status.
arm64_guarded() {
  local try rc sidfile sid last now idle stall=${ARM64_STALL_S:-240} pid
  sidfile=$(mktemp)
  for try in 1 2 3; do
    setsid bash -c 'echo $$ >"$0"; exec "$@"' "$sidfile" "$@" &
    pid=$!
    sid="" last=-1 idle=0
    while kill -0 "$pid" 2>/dev/null; do
      sleep 2
      [ -n "$sid" ] || sid=$(cat "$sidfile" 2>/dev/null)
      [ -n "$sid" ] || continue
      # utime+stime (fields 14, 15) of every process of the session (field 6)
      now=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v s="$sid" '$6 == s {t += $14 + $15} END {print t + 0}')
      if [ "$now" = "$last" ]; then idle=$((idle + 2)); else idle=0 last=$now; fi
      if [ "$idle" -ge "$stall" ]; then
        arm64_log "no CPU progress for ${stall} s (an emulated process deadlocked?): killing the run, attempt $try of 3"
        for p in $(awk -v s="$sid" '$6 == s {print $1}' /proc/[0-9]*/stat 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
        break
      fi
    done
    rc=0
    wait "$pid" || rc=$?
    [ "$idle" -ge "$stall" ] || break
  done
  rm -f "$sidfile"
  return "$rc"
}

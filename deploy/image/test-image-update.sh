# deploy/image/test-image's update boots (sourced by it, with its helpers and variables): signed
# A/B updates under -M virt, through the card's own boot chain (qemu_arm64 U-Boot running the
# FAT's boot.scr). The first is the monitor boot itself (its monitor.toml, broker and password):
#   monitor       (update_prepare before it, update_a_checks after) slot A, once the monitor's own
#                 checks are done: the state partition's files hashed; bundles signed with another
#                 key, for another `compatible`, truncated: each refused, the card as it was; then
#                 the fleet's release published (retained, "install": true) on the host's
#                 mosquitto: the monitor asks, RAUC streams the bundle from a local HTTP server
#                 into slot B, the card reboots
#   update-b      slot B on trial: marked good by the gate once on air and the monitor connected;
#                 heard by the observer; then a release whose altbeacond exits at once is published,
#                 the monitor asks for it, and the VM is killed 20 s into RAUC's write of slot A
#   update-cut    the boot after the cut: slot B, on air, slot A left bad; a bundle of the running
#                 version copied onto the boot partition set aside; the monitor asks for the
#                 retained broken release again, RAUC installs it whole into slot A
#   update-after-N  slot A fails: its gate marks it bad and reboots; the boot script boots B:
#                 "rolled-back" in the state file and in the monitor's retained update state (what
#                 Home Assistant's update entity shows)
# Around them: the state partition's files byte for byte the same after as in the first boot
# (config, last good config, the monitor's files, SSH host keys, the network; systemd's own
# directory aside), and every file system clean (fsck -n).
# shellcheck shell=bash
# mk_root_variant NAME VERSION [FAKE_ALTBEACOND]: slot A's root as an ext4 image with another
# version (and, with FAKE_ALTBEACOND, an altbeacond that exits 3 for every command)
mk_root_variant() {
  local out=$w/bundles/$1.ext4 blocks bsize
  partition 5 "$out"
  blocks=$(dumpe2fs -h "$out" 2>/dev/null | sed -n 's/^Block count: *//p')
  bsize=$(dumpe2fs -h "$out" 2>/dev/null | sed -n 's/^Block size: *//p')
  truncate -s $((blocks * bsize)) "$out"
  echo "$2" >"$w/bundles/version.txt"
  debugfs -w -R "rm /usr/lib/altbeacon-image/version" "$out" >/dev/null 2>&1
  debugfs -w -R "write $w/bundles/version.txt /usr/lib/altbeacon-image/version" "$out" >/dev/null 2>&1
  if [ -n "${3:-}" ]; then
    printf '#!/bin/sh\necho "a broken altbeacond (deploy/image/test-image-update.sh)" >&2\nexit 3\n' >"$w/bundles/fake"
    debugfs -w -R "rm /usr/bin/altbeacond" "$out" >/dev/null 2>&1
    debugfs -w -R "write $w/bundles/fake /usr/bin/altbeacond" "$out" >/dev/null 2>&1
    debugfs -w -R "sif /usr/bin/altbeacond mode 0100755" "$out" >/dev/null 2>&1
  fi
  rm -f "$w/bundles/version.txt" "$w/bundles/fake"
  e2fsck -fn "$out" >/dev/null 2>&1 || bad "update: the $1 root image is not a clean ext4 after its edit"
}
# mk_bundle NAME IMAGE COMPATIBLE VERSION KEYDIR: a verity bundle as deploy/build-image makes one
mk_bundle() {
  local d=$w/bundles/$1.d
  rm -rf "$d"; mkdir -p "$d"
  ln "$2" "$d/rootfs.ext4"
  # adaptive as deploy/build-image makes them (issue 49): the card fetches only what it lacks
  printf '%s\n' '[update]' "compatible=$3" "version=$4" '' '[bundle]' 'format=verity' '' '[image.rootfs]' 'filename=rootfs.ext4' \
    'adaptive=block-hash-index' >"$d/manifest.raucm"
  # lz4: made in a second where gzip takes 20 s beside the other card's VM, and read faster by the
  # emulated guest (a release is RAUC's default, gzip; the guest's squashfs reads both)
  rauc --cert="$5/update-cert.pem" --key="$5/update-key.pem" --mksquashfs-args="-comp lz4 -b 64k" \
    bundle "$d" "$w/bundles/$1.raucb" >"$w/bundles/$1.log" 2>&1 \
    || bad "update: rauc bundle $1 failed: $(tail -2 "$w/bundles/$1.log" | tr '\n' ' ')"
  rm -rf "$d"
}
mk_bundles() {
  local keys
  # the throwaway key the test image trusts (deploy/build-image --keys), never the owner's
  keys=${ALTBEACOND_IMAGE_TEST_KEYS:-}
  [ -n "$keys" ] && [ -f "$keys/update-key.pem" ] \
    || die "the update boots sign with the test image's throwaway key: set ALTBEACOND_IMAGE_TEST_KEYS to the directory given to deploy/build-image --keys"
  rm -rf "$w/bundles"; mkdir -p "$w/bundles"
  # the broken release newer than the good one (Debian's order): a card refuses an older one
  good_version="$version+up1" nobeacon_version="$version+up2.nobeacon"
  # as extended regular expressions (expect's): a version's "." and "+" taken literally
  good_re=$(printf '%s' "$good_version" | sed 's/[.+]/\\&/g')
  nobeacon_re=$(printf '%s' "$nobeacon_version" | sed 's/[.+]/\\&/g')
  mk_root_variant good "$good_version"
  debugfs -R "cat /etc/rauc/keyring.pem" "$w/bundles/good.ext4" 2>/dev/null | cmp -s - "$keys/update-cert.pem" \
    || die "the image does not trust $keys/update-cert.pem: build it with deploy/build-image --keys $keys"
  mk_root_variant nobeacon "$nobeacon_version" fake
  mk_bundle good "$w/bundles/good.ext4" altbeacon-rpi-arm64 "$good_version" "$keys"
  mk_bundle nobeacon "$w/bundles/nobeacon.ext4" altbeacon-rpi-arm64 "$nobeacon_version" "$keys"
  # the hostile ones: refused before their image is read, so a small root does
  mkdir -p "$w/bundles/small"
  # (a few MiB: RAUC's dm-verity table for a bundle of a few KiB fails before the manifest is read)
  head -c $((8 << 20)) /dev/urandom >"$w/bundles/small/noise"
  mke2fs -q -t ext4 -d "$w/bundles/small" "$w/bundles/small.ext4" 16M
  rm -rf "$w/bundles/small"
  "$repo/deploy/make-update-key" "$w/bundles/other-key" >/dev/null 2>&1
  mk_bundle other-key "$w/bundles/small.ext4" altbeacon-rpi-arm64 other-key "$w/bundles/other-key"
  mk_bundle other-compatible "$w/bundles/small.ext4" some-other-product other-compatible "$keys"
  # issue 49: validly signed, for this product, and older than what runs (a replay)
  mk_bundle older "$w/bundles/small.ext4" altbeacon-rpi-arm64 0.0.0~old "$keys"
  head -c $(( $(stat -c %s "$w/bundles/good.raucb") / 2 )) "$w/bundles/good.raucb" >"$w/bundles/truncated.raucb"
  rm -f "$w/bundles/"*.ext4
  rm -rf "$w/bundles/other-key"
  log "update bundles: $(cd "$w/bundles" && ls -s --block-size=M ./*.raucb | tr '\n' ' ')"
}
# release NAME VERSION: the fleet's release message for bundle NAME (install: true)
release() {
  printf '{"version":"%s","url":"http://10.0.2.2:%s/%s.raucb","install":true,"rollout":100,"halt_after":1}' "$2" "$bport" "$1"
}
# publish_on MARK PAYLOAD: in the background, publishes PAYLOAD retained on the fleet topic once
# the console of the boot now running ($w/$boot_name.log) shows MARK
publish_on() {
  ( local i=0
    while [ $i -lt 1800 ]; do
      if grep -aq "$1" "$w/$boot_name.log" 2>/dev/null; then
        mosquitto_pub -h 127.0.0.1 -p "$mq_port" -u altbeacond -P "$mq_pw" -r -q 1 -t altbeacond/fleet/release -m "$2" \
          && echo "test-image: published the fleet release on $1: $2" >&2
        return 0
      fi
      i=$((i + 1)); sleep 1
    done ) &
  pubpid=$!
}
# state_files SNAPSHOT: the state partition's files (debugfs rdump of partition 3) that are the
# card's own: config and its .bak, the monitor's files, the last good config and the monitor's
# memory (var-lib-altbeacond), SSH host keys, the network. Not systemd's /var/lib/systemd, which
# systemd itself rewrites at every boot whatever happens (its random seed, timer stamps).
state_files() {
  partition 3 "$w/persist.img"
  rm -rf "$w/$1"; mkdir -p "$w/$1"
  debugfs -R "rdump / $w/$1" "$w/persist.img" >/dev/null 2>&1
  rm -rf "$w/$1/lost+found" "$w/$1/var-lib-systemd"
  rm -f "$w/persist.img"
}

# update_prepare: before the monitor boot: the bundles, their HTTP server, what the probes read
update_prepare() {
  local t
  for t in rauc mosquitto mosquitto_pub mosquitto_sub dumpe2fs debugfs; do
    command -v "$t" >/dev/null || { bad "update: $t is missing (deploy/install-deps)"; return 1; }
  done
  step update-bundles mk_bundles
  python3 "$here/bundle-server.py" "$w/bundles" >"$w/bundle-server.port" 2>"$w/bundle-server.log" &
  bspid=$!
  for _ in $(seq 50); do [ -s "$w/bundle-server.port" ] && break; sleep 0.1; done
  bport=$(cat "$w/bundle-server.port")
  printf 'BPORT=%s\n' "$bport" >"$w/update.env"
  mcopy -o -i "$fat" "$w/update.env" ::/abtest/update.env
  # what the observer must hear from the monitor boot's beacon (uuid_c, 4660, 86, -61), as on-air's
  printf '0201061bff1801beac%s12340056c300' "${uuid_c//-/}" >"$w/on-air.hex"
  mcopy -o -i "$fat" "$w/on-air.hex" ::/abtest/on-air.hex
}

# update_a_checks NAME: what the first update boot (the monitor boot, console NAME) must have shown
update_a_checks() {
  local g=$1
  expect "$g" slot '^A ' "the first boot from slot A"
  expect "$g" rauc "RAUC_SYSTEM_COMPATIBLE='altbeacon-rpi-arm64'.*RAUC_SYSTEM_BOOTED_BOOTNAME='A'" "RAUC knows the card: compatible altbeacon-rpi-arm64, booted from A"
  expect "$g" statefile '^[0-9a-f]{64} ' "the state partition's files hashed before the update"
  expect "$g" refused_other-key 'outcome=refused outcome_version=other-key message=RAUC: .*(signature|verif|certificate)' "a bundle signed with another key refused, said"
  expect "$g" refused_other-compatible 'outcome=refused outcome_version=other-compatible message=RAUC: .*ompatible' "a bundle for another product (compatible) refused, said"
  expect "$g" refused_truncated 'outcome=refused outcome_version=truncated message=RAUC: ' "a truncated bundle refused, said"
  expect "$g" refused_older 'outcome=refused outcome_version=0\.0\.0~old message=0\.0\.0~old is older than the installed ' "an older bundle signed with the fleet's key (a replay) refused by its own version (issue 49)"
  expect "$g" download_failed 'outcome=download-failed outcome_version=9\.9\.9 message=could not fetch http://10\.0\.2\.2:1/gone\.raucb after 4 tries: ' "a download that cannot reach its server: tried 4 times with a back-off, said as a failed download, not a refusal (issue 49)"
  if [ "$(grep -ac 'of 9\.9\.9 failed (.*): trying again in' "$w/$g.log")" -ge 3 ]; then ok "$g: each failed try said with its wait: $(grep -ao 'trying again in [0-9]* s' "$w/$g.log" | tr '\n' ' ')"
  else bad "$g: the download's retries not said on the console"; fi
  expect "$g" bootstate_after_refusals 'BOOT_ORDER=A B( |$)' "the refusals left the boot order as it was"
  expect "$g" monitorfile 'connected=1' "the monitor told the gate it reached the broker"
  if grep -aqF "asked the updater for $good_version" "$w/$g.log" || grep -aqF "installing $good_version from http" "$w/$g.log"; then
    ok "$g: the monitor asked for the fleet's release $good_version (MQTT, retained, install: true)"
  else bad "$g: no install of $good_version started from the fleet's release"; fi
  if grep -aq 'installed .*rebooting into it' "$w/$g.log"; then ok "$g: RAUC installed $good_version into slot B over HTTP; the card rebooted into it"
  else bad "$g: no 'installed ... rebooting into it' on the console"; fi
  if grep -aq 'bytes=' "$w/bundle-server.log"; then ok "$g: the bundle streamed with byte ranges ($(grep -c good.raucb "$w/bundle-server.log") requests)"
  else bad "$g: no ranged request of the bundle ($(tail -3 "$w/bundle-server.log" | tr '\n' ' '))"; fi
  # issue 49: an adaptive update fetches what the card's slots lack (the release changes the
  # version and a few files of the same root): the bytes served, beside the bundle's size
  local fetched size took
  fetched=$(python3 "$here/bundle-bytes.py" "$w/bundle-server.log" good.raucb)
  size=$(stat -c %s "$w/bundles/good.raucb")
  took=$(grep -ao 'installed [^ ]* in [0-9]* s' "$w/$g.log" | head -1 | sed 's/.* in \([0-9]*\) s/\1/')
  log "update bytes: good.raucb fetched ${fetched%% *} of $size bytes in ${fetched##* } requests; the install took ${took:-?} s"
  if [ "${fetched%% *}" -gt 0 ] && [ "${fetched%% *}" -lt $((size / 4)) ]; then
    ok "$g: adaptive update: ${fetched%% *} bytes fetched of the bundle's $size ($(( ${fetched%% *} * 100 / size )) %), installed in ${took:-?} s"
  else bad "$g: ${fetched%% *} bytes fetched of the bundle's $size: not adaptive (RAUC's block-hash index unused?)"; fi
}

# boot_update: the update boots after the first (the monitor boot)
boot_update() {
  [ -n "${bspid:-}" ] && [ -f "$w/monitor.log" ] || { bad "update: runs after the monitor boot (its broker, monitor.toml and the first update boot)"; return; }
  local t g n
  mq_port=$(sed -n 's/^listener \([0-9]*\) .*/\1/p' "$w/mosquitto.conf") mq_pw='abtest pass 1'
  if [ -z "$mqpid" ]; then mosquitto -c "$w/mosquitto.conf" >>"$w/mosquitto.log" 2>&1 & mqpid=$!; fi

  # slot B on trial; then the broken release, and the power cut 8 s into RAUC's write of slot A
  # (its step "Copying image to rootfs.0", as update-install passes RAUC's progress to the
  # console: an adaptive write logs no "writing data to device", and reuses most blocks, so it
  # is quicker than a whole one)
  boot_name=update-b; publish_on ABTEST-PUBLISH-BAD "$(release nobeacon "$nobeacon_version")"
  kill_after=8 boot update-b virt update-b "Copying image to rootfs"
  kill "$pubpid" 2>/dev/null || true
  expect update-b slot '^B ' "the next boot from slot B"
  expect update-b version "^$good_re\$" "slot B runs $good_version"
  expect update-b updatestate "installed_version=$good_re slot=B phase=idle outcome=installed outcome_version=$good_re " "the gate kept slot B: installed"
  expect update-b bootstate 'BOOT_B_LEFT=3' "slot B marked good (its attempts back to 3)"
  expect update-b heard '^[1-9]' "slot B's beacon heard by the observer"
  expect update-b failed '^ *$' "no failed units"
  if grep -aq "installing $nobeacon_version from http" "$w/update-b.log" && grep -aq 'Copying image to rootfs' "$w/update-b.log" \
      && ! grep -aEq "installed $nobeacon_re" "$w/update-b.log"; then
    ok "update-b: the monitor asked for the fleet's $nobeacon_version; the power was cut 8 s into RAUC's write of slot A"
  else bad "update-b: no install of $nobeacon_version cut in the middle"; fi

  # after the cut: slot B (A was marked bad before its first block); a bundle a PC copied onto the
  # boot partition, of the running version, set aside; the fleet's release asked for again and
  # installed whole into slot A
  mcopy -o -i "$fat" "$w/bundles/good.raucb" ::altbeacon-update.raucb
  boot_name=update-cut
  boot_limit=$install_boot_limit boot update-cut virt update-cut
  expect update-cut slot '^B ' "after a power cut in the middle of an install: slot B"
  expect update-cut bootstate 'BOOT_A_LEFT=0' "slot A (half written) left bad"
  expect update-cut heard '^[1-9]' "on air after the cut"
  # issue 49: the trial was put before RAUC wrote a byte, so the gate knows an install was cut
  if grep -aEq "the install of $nobeacon_re into slot A did not finish" "$w/update-cut.log"; then
    ok "update-cut: the gate read the trial of a slot never made primary as an install that did not finish (not a rollback)"
  else bad "update-cut: the gate did not say the cut install was interrupted"; fi
  expect update-cut failed '^ *$' "no failed units after the cut"
  if fat_has altbeacon-update.raucb.applied && ! fat_has altbeacon-update.raucb; then
    ok "update-cut: a bundle of the running version on the boot partition set aside as altbeacon-update.raucb.applied, not installed again"
  else bad "update-cut: the boot partition's bundles: $(mdir -b -i "$fat" :: | grep -i raucb | tr '\n' ' ')"; fi
  mdel -i "$fat" ::altbeacon-update.raucb.applied 2>/dev/null || true
  if grep -aq 'installed .*rebooting into it' "$w/update-cut.log"; then
    ok "update-cut: the fleet's release, cut before, asked for again by the monitor and installed whole"
  else bad "update-cut: the cut install was not taken up again"; fi

  # the broken release: slot A fails its trial, its gate marks it bad, the boot script boots B
  n=0
  while [ $n -lt 4 ]; do
    n=$((n + 1))
    boot_name=update-after-$n
    boot "update-after-$n" virt update-after
    val "update-after-$n" after_slot | grep -q B && break
  done
  g=update-after-$n
  if [ "$n" -eq 2 ] && val "$g" after_slot | grep -q B; then
    ok "update: the broken release booted once from slot A, failed by its gate (marked bad, rebooted), then slot B"
  else bad "update: slot B after $n boots ($(for i in $(seq "$n"); do printf '%s ' "$(val "update-after-$i" after_slot)"; done))"; fi
  # (its altbeacond exits 3 for everything: its monitor --check refuses the card's monitor.toml first)
  grep -aEq 'on trial failed: (altbeacond exited|this release refuses the card.s monitor\.toml)' "$w/update-after-1.log" \
    && ok "update-after-1: the gate said why: $(grep -ao 'on trial failed: [^;]*' "$w/update-after-1.log" | head -1)" \
    || bad "update-after-1: the gate did not say the broken slot failed"
  expect "$g" updatestate "installed_version=$good_re slot=B phase=idle outcome=rolled-back outcome_version=$nobeacon_re message=slot A did not become a beacon" "rolled back to $good_version, the reason said"
  # (RAUC's mark-bad takes A out of BOOT_ORDER: the next install puts it back first)
  expect "$g" bootstate 'BOOT_A_LEFT=0 .*BOOT_ORDER=B( |$)' "slot A left bad (no attempts), B first"
  # the fleet's broken release is still offered (retained, install: true): never asked for again
  if grep -aqF "installing $nobeacon_version" "$w/$g.log"; then
    bad "$g: the rolled-back $nobeacon_version asked for and installed again (a loop of install, fail, roll back)"
  elif grep -aqF "the fleet's $nobeacon_version: rolled back on this card before" "$w/$g.log"; then
    ok "$g: the fleet's $nobeacon_version, still offered, not asked for again: 'rolled back on this card before'"
  else bad "$g: the monitor did not say why it leaves the fleet's $nobeacon_version alone"; fi
  expect "$g" heard '^[1-9]' "slot B's beacon on air again after the rollback"
  expect "$g" failed '^ *$' "no failed units after the rollback"
  t=$(timeout 15 mosquitto_sub -h 127.0.0.1 -p "$mq_port" -u altbeacond -P "$mq_pw" -t 'altbeacond/+/update' -C 1 -W 10 2>&1 || true)
  if echo "$t" | grep -qi 'rolled back'; then ok "update: the monitor's retained update state (Home Assistant's update entity) says the rollback: $(echo "$t" | cut -c1-160)"
  else bad "update: the retained altbeacond/+/update does not say the rollback ($t)"; fi

  # issue 49: the fleet's brake: the card that rolled back says so, retained, beside the release
  # topic, where every other card counts it (halt_after 1 in this release: the rollout stops)
  t=$(timeout 15 mosquitto_sub -h 127.0.0.1 -p "$mq_port" -u altbeacond -P "$mq_pw" -t 'altbeacond/fleet/release/rolled-back/+' -v -C 1 -W 10 2>&1 || true)
  if echo "$t" | grep -Eq "\"version\":\"$nobeacon_re\""; then ok "update: the rollback reported to the fleet, retained: $(echo "$t" | cut -c1-160)"
  else bad "update: no retained rollback report beside the release topic ($t)"; fi
  kill "$bspid" 2>/dev/null || true; wait "$bspid" 2>/dev/null || true
  kill "$mqpid" 2>/dev/null || true; wait "$mqpid" 2>/dev/null || true; mqpid=""
  state_files state-after
  # every file the first boot hashed (before any update) the same after; files the daemon and
  # monitor made since in their normal work (last-good.toml once on air) are not the update's.
  # Only whole console lines count (the journal's own lines share the console).
  # (not the monitor's announced topics, var-lib-altbeacond/monitor-announced: the set of retained
  # topics it published, which grows with what happens, a rollback report among them; nor RAUC's
  # own status and block-hash indexes in rauc/, which each install and mark-good rewrite)
  grep -aoE 'ABTEST statefile=[0-9a-f]{64} \./[^ ]+$' "$w/monitor.log" | tr -d '\r' | sed 's/^ABTEST statefile=\([0-9a-f]*\) /\1  /' \
    | grep -v -e ' \./var-lib-altbeacond/monitor-announced$' -e ' \./rauc/' >"$w/state-before.sha256"
  (cd "$w/state-after" && sha256sum --quiet -c "$w/state-before.sha256" >"$w/state.diff" 2>&1)
  n=$(wc -l <"$w/state-before.sha256")
  if ! grep -q ' \./etc-altbeacond/config\.toml$' "$w/state-before.sha256"; then
    bad "update: the first boot's hashes of the state partition lack config.toml ($n files: $(tr '\n' ' ' <"$w/state-before.sha256" | cut -c1-600))"
  elif [ ! -s "$w/state.diff" ]; then
    ok "update: the state partition's files byte for byte the same across the update, the cut and the rollback ($n files: $(sed 's|^[0-9a-f]*  \./||' "$w/state-before.sha256" | tr '\n' ' ' | cut -c1-300))"
  else bad "update: the state partition changed: $(tr '\n' ' ' <"$w/state.diff" | cut -c1-1500)"; fi
  fsck_partition 3 "update: the state partition"
  fsck_partition 6 "update: slot B"
  boot_torn
}

# boot_torn (issue 49): the boot state survives a write torn by a power cut, Linux's (the gate's,
# RAUC's: fw_setenv) and the boot script's own. The card runs slot B after the rollback; each
# tear corrupts the newest of the two copies (bootstate.py) as a write cut half-way would.
boot_torn() {
  local off before torn after other
  off=$(( $(sed -n "s/^[^ ]*2 : start= *\([0-9]*\),.*/\1/p" "$w/sfdisk.txt") * 512 ))
  python3 "$here/bootstate.py" show "$img" "$off" >"$w/bootstate-end.txt" 2>&1
  if grep -q '^copy 0 valid' "$w/bootstate-end.txt" && grep -q '^copy 1 valid' "$w/bootstate-end.txt"; then
    ok "torn: two copies of the boot state, both whole, written in turn ($(tr '\n' ' ' <"$w/bootstate-end.txt" | sed 's/ALTBEACON_OUTCOME=[^B]*//g' | cut -c1-300))"
  else bad "torn: not two whole copies: $(tr '\n' ' ' <"$w/bootstate-end.txt" | cut -c1-400)"; fi
  # Linux's last write (the gate's mark-good) torn
  torn=$(python3 "$here/bootstate.py" tear "$img" "$off" current) other=$((1 - torn))
  boot_name=tear-linux
  boot tear-linux virt tear
  expect tear-linux slot '^B ' "Linux's last boot-state write torn (copy $torn): still slot B"
  if grep -aq "altbeacon: boot state read (copy $other of 2" "$w/tear-linux.log"; then
    ok "tear-linux: the boot script read the copy before it (copy $other), not 'a new card'"
  else bad "tear-linux: the boot script did not read copy $other: $(grep -ao 'altbeacon: [a-z ]*boot state[^\r]*' "$w/tear-linux.log" | head -1)"; fi
  expect tear-linux bootstate 'BOOT_ORDER=B' "Linux reads the boot state (fw_printenv, two copies): B first"
  # the boot script's own write torn: the card stopped as soon as U-Boot wrote, that copy torn
  python3 "$here/bootstate.py" show "$img" "$off" >"$w/bootstate-before-uboot.txt"
  before=$(sed -n 's/^current //p' "$w/bootstate-before-uboot.txt")
  stop_on='altbeacon: slot' boot tear-uboot-write virt tear
  python3 "$here/bootstate.py" show "$img" "$off" >"$w/bootstate-after-uboot.txt"
  after=$(sed -n 's/^current //p' "$w/bootstate-after-uboot.txt")
  if [ -n "$before" ] && [ "$after" = $((1 - before)) ]; then
    ok "tear-uboot-write: the boot script wrote the other copy (copy $after), its flag one more: $(grep "^copy $after" "$w/bootstate-after-uboot.txt" | cut -d' ' -f1-5)"
  else bad "tear-uboot-write: the boot script's write went to copy ${after:-none} (the current was ${before:-none})"; fi
  torn=$(python3 "$here/bootstate.py" tear "$img" "$off" current) other=$((1 - torn))
  boot_name=tear-uboot
  boot tear-uboot virt tear
  expect tear-uboot slot '^B ' "the boot script's own write torn (copy $torn): still slot B"
  if grep -aq "altbeacon: boot state read (copy $other of 2" "$w/tear-uboot.log"; then
    ok "tear-uboot: the boot script read the copy before its torn write (copy $other)"
  else bad "tear-uboot: the boot script did not read copy $other: $(grep -ao 'altbeacon: [a-z ]*boot state[^\r]*' "$w/tear-uboot.log" | head -1)"; fi
}

#!/bin/bash
# altbeacond testbed, systemd boots (tb.init=systemd): runs in the guest chrooted into the
# overlay root before /init hands over to systemd. Installs the shipped unit with
# `deploy/install --root` and the altbeacond user as the .deb's postinst makes it, keeps
# /etc/altbeacond and /var/lib/altbeacond on the persistent share (they outlive a reboot of the
# guest), and writes the testbed's units: the rig (modules, gpio-sim, btvirt; stage2.sh with
# TB_RIG_ONLY) before altbeacond.service, and the scenario after it, whose output goes to the
# output port, then "TB-EXIT:<status>" and a power-off. systemd boots into
# altbeacond-testbed.target (systemd.unit= on the kernel command line).
run=$1
# shellcheck source=/dev/null
. "$run/env" || exit 125
set -e
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$TB_REPO/deploy/testbed/guest
out=/dev/${TB_OUT:-ttyS1}
persist=/var/lib/altbeacond-persist
boot=$(( $(cat "$persist/boots" 2>/dev/null || echo 0) + 1 ))
echo "$boot" >"$persist/boots"

getent group gpio >/dev/null || groupadd --system gpio
getent passwd altbeacond >/dev/null || useradd --system --user-group --no-create-home \
  --home-dir /nonexistent --shell /usr/sbin/nologin altbeacond

# deploy/install --root into this very root (it is the overlay: bound to a second path)
mkdir -p /mnt/target && mount --bind / /mnt/target
"$TB_REPO/deploy/install" --root /mnt/target --binary "$ALTBEACOND_BIN" --no-start >&2
umount /mnt/target

mkdir -p "$persist/etc" "$persist/state"
if [ "$boot" = 1 ]; then
  # the rig beacon (SPEC §3) with a status and a fault LED on the simulated Pi 4 chip
  printf '%s\n' '[beacon]' 'uuid = "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6"' 'major = 1' 'minor = 2' \
    '[leds]' 'chip = "pinctrl-bcm2711"' 'status = "GPIO17"' 'fault = "GPIO27"' >"$persist/etc/config.toml"
fi
# as the .deb's postinst leaves it: the daemon may replace its config (changes from afar)
chgrp altbeacond "$persist/etc" && chmod 0775 "$persist/etc"
mount --bind "$persist/etc" /etc/altbeacond
mkdir -p /var/lib/altbeacond
mount --bind "$persist/state" /var/lib/altbeacond

u=/etc/systemd/system
cat >"$u/altbeacond-testbed.target" <<UNIT
[Unit]
Description=altbeacond testbed (boot $boot)
Wants=altbeacond-testbed-rig.service altbeacond.service altbeacond-testbed-scenario.service
UNIT
cat >"$u/altbeacond-testbed-rig.service" <<UNIT
[Unit]
Description=altbeacond testbed rig: hci_vhci, gpio-sim, btvirt
DefaultDependencies=no
After=systemd-modules-load.service local-fs.target
Before=altbeacond.service
[Service]
Type=oneshot
RemainAfterExit=yes
Environment=TB_RIG_ONLY=1
ExecStart=/bin/bash $here/stage2.sh $run
UNIT
cat >"$u/altbeacond-testbed-scenario.service" <<UNIT
[Unit]
Description=altbeacond testbed scenario
After=altbeacond-testbed-rig.service altbeacond.service
[Service]
Type=oneshot
Environment=TB_RUN=$run TB_STATE=/run/altbeacond-testbed TB_BOOT=$boot HOME=/tmp LANG=C.UTF-8
ExecStart=/bin/bash -c '. $run/env; export TB_GPIOCHIP=\$(cat /run/altbeacond-testbed/gpiochip); export TB_GPIO_SYSFS=\$(cat /run/altbeacond-testbed/gpiosysfs); cd /tmp; bash \$TB_SCENARIO >$out 2>&1; rc=\$?; [ "\$rc" = 99 ] && { echo TB-REBOOT >$out; systemctl reboot; exit 0; }; echo TB-EXIT:\$rc >$out; systemctl poweroff -ff'
UNIT
# TB_BOOT_UNIT=studyguide (deploy/bench): the study guide's lines as a oneshot unit instead of
# altbeacond, ordered the same way, to compare boot-to-air in the same guest
if [ "${TB_BOOT_UNIT:-}" = studyguide ]; then
  ln -sf /dev/null "$u/altbeacond.service"
  cat >"$u/studyguide-beacon.service" <<UNIT
[Unit]
Description=the study guide's hciconfig/hcitool lines, as a oneshot unit
After=altbeacond-testbed-rig.service
Before=altbeacond-testbed-scenario.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/bash -c '. $run/env; . \$TB_REPO/deploy/testbed/lib.sh; tb_studyguide_start hci0'
UNIT
  sed -i 's/^Wants=.*/& studyguide-beacon.service/' "$u/altbeacond-testbed.target"
fi

#!/bin/bash
# altbeacond testbed: stage 2, runs in the guest as root, chrooted into the host root (read-only
# 9p, tmpfs on /tmp and /run). Loads the Bluetooth and GPIO modules, makes the gpio-sim chip
# (pinctrl-bcm2711, 28 lines GPIO0..GPIO27), starts btvirt in the requested flavour, waits for
# hci0 and hci1, then runs the scenario with its output on TB_OUT (ttyS1; hvc0 on aarch64), or a
# shell on the console.
# Its exit status is the scenario's; stage 1 (/init) turns it into the TB-EXIT marker.
run="$1"
# shellcheck source=/dev/null
. "$run/env" || { echo "stage2: cannot read $run/env" >&2; exit 125; }
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C.UTF-8 TERM="${TERM:-linux}"
export TB_RUN="$run" TB_STATE=/run/altbeacond-testbed
mkdir -p "$TB_STATE"
exec </dev/null

say() { echo "stage2: [$(cut -d' ' -f1 /proc/uptime)] $*" >/dev/console; }
say "started"

# writable places some tools want; everything else of the host root stays read-only
for d in /var/lib/bluetooth /var/tmp /dev/shm; do mount -t tmpfs -o mode=1777 tmpfs "$d" 2>/dev/null; done
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null

modprobe -d "$TB_KROOT" -S "$TB_KVER" -a configfs gpio-sim hci_vhci \
  algif_skcipher algif_hash aes_generic ecb cmac || { say "modprobe failed"; exit 125; }
say "modules loaded"
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config || { say "configfs mount failed"; exit 125; }

# gpio-sim chip like a Pi 4's: label pinctrl-bcm2711, 28 lines named as Debian's device tree
# names them (bcm2711-rpi-4-b.dts, SPEC §11): 0-15 after their function, the rest GPIO16..GPIO27
sim=/sys/kernel/config/gpio-sim/pi
mkdir "$sim" "$sim/bank0" || { say "gpio-sim configfs missing"; exit 125; }
echo 28 >"$sim/bank0/num_lines"
echo pinctrl-bcm2711 >"$sim/bank0/label"
mkdir "$sim/bank0/line"{0..27}   # one exec: every exec costs under emulation
names=(ID_SDA ID_SCL SDA1 SCL1 GPIO_GCLK GPIO5 GPIO6 SPI_CE1_N SPI_CE0_N SPI_MISO SPI_MOSI SPI_SCLK GPIO12 GPIO13 TXD1 RXD1)
for i in {0..27}; do echo "${names[i]:-GPIO$i}" >"$sim/bank0/line$i/name"; done
echo 1 >"$sim/live" || { say "gpio-sim chip did not go live"; exit 125; }
chip=$(cat "$sim/bank0/chip_name")
export TB_GPIOCHIP="/dev/$chip"
export TB_GPIO_SYSFS="/sys/devices/platform/$(cat "$sim/dev_name")/$chip"
echo "$TB_GPIOCHIP" >"$TB_STATE/gpiochip"
echo "$TB_GPIO_SYSFS" >"$TB_STATE/gpiosysfs"

say "gpio-sim chip $chip live"
# shellcheck source=../lib.sh
. "$TB_REPO/deploy/testbed/lib.sh"
tb_btvirt_start "${TB_FLAVOUR:-le}" || { say "btvirt did not give hci0 and hci1"; exit 125; }
# A hostname, as every Pi has one: each scenario then runs what a Pi runs by default, the frames
# scannable with the hostname as their name (issue 32; [beacon] name). The kernel's own is "(none)".
hostname tb-pi || { say "cannot set the hostname"; exit 125; }
say "ready: $TB_GPIOCHIP (pinctrl-bcm2711), btvirt ${TB_FLAVOUR:-le}"

if [ -n "${TB_RIG_ONLY:-}" ]; then
  # under systemd (guest/systemd-prep.sh): the rig is a oneshot unit; the scenario is another.
  # The unit's SupplementaryGroups=gpio gives the chip, as udev does on Raspberry Pi OS.
  chgrp gpio "$TB_GPIOCHIP" && chmod 660 "$TB_GPIOCHIP"
  exit 0
fi

if [ -n "${TB_SHELL:-}" ]; then
  say "interactive shell with the lib.sh helpers (tb_...); exit powers off"
  cd "$TB_REPO" || true
  setsid -c bash --rcfile "$TB_REPO/deploy/testbed/lib.sh" -i <>"/dev/${TB_CONSOLE:-ttyS0}" >&0 2>&1
  exit 0
fi

cd /tmp || exit 125
bash "$TB_SCENARIO" >"/dev/${TB_OUT:-ttyS1}" 2>&1

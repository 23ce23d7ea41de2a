#!/bin/sh
# Boot 3 (deploy/image/test-image, -M virt): the image's own binary, unit and config on air,
# heard by the testbed's observer through hci_vhci and btvirt (two emulated LE controllers).
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
a=$boot/abtest
modprobe bluetooth
insmod $a/hci_vhci.ko || say "insmod=failed"
$a/btvirt -l2 -L >/run/btvirt.log 2>&1 &
i=0
while [ $i -lt 100 ] && [ ! -e /sys/class/bluetooth/hci1 ]; do i=$((i + 1)); sleep 0.1; done
say "controllers=$(ls /sys/class/bluetooth | tr '\n' ' ')"
wait_active 120
state ""
say "heard=$($a/observe -i hci1 --hex "$(cat $a/on-air.hex)" --count 3 --timeout 30000 2>&1 | wc -l)"
say "user=$(ps -o user= -C altbeacond | head -1)"
# resident memory on the image's own kernel (Debian's 6.12, as Pi OS trixie's), counted by the
# page tables (smaps_rollup), and the kernel's VmRSS counter beside it (docs/benchmarks.md)
p=$(ps -o pid= -C altbeacond | head -1 | tr -d ' ')
say "memory=Rss $(sed -n 's/^Rss: *\([0-9]*\) kB/\1/p' /proc/$p/smaps_rollup 2>&1) KiB, VmRSS $(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$p/status 2>&1) KiB, kernel $(uname -r)"
# the host logs in over SSH (authorized_keys on the boot partition) and leaves this file
i=0
while [ $i -lt 240 ] && [ ! -e /run/abtest-ssh-done ]; do i=$((i + 1)); sleep 1; done
say "sshlogin=$([ -e /run/abtest-ssh-done ] && echo yes || echo no) after=${i}s"
say "net=$(networkctl --no-legend list 2>&1 | tr -s ' \n' ' ')"
journal 10
echo "ABTEST-DONE"

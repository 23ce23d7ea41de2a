#!/bin/sh
# Update boot after the power cut in the middle of an install: the slot RAUC was writing had been
# marked bad first, so the boot script boots the other one, on air. The fleet's broken release is
# still offered (retained, install: true): the monitor asks for it again, RAUC installs it whole
# this time, and the card reboots into it (the VM ends there).
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
bt_up
wait_active 120
ids
say "heard=$($boot/abtest/observe -i hci1 --hex "$(cat $boot/abtest/on-air.hex)" --count 3 --timeout 30000 2>&1 | wc -l)"
say "version=$(cat /usr/lib/altbeacon-image/version)"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
say "bootfiles=$(ls $boot | grep -i raucb | tr '\n' ' ')"
sleep 900

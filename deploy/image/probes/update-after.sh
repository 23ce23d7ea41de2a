#!/bin/sh
# Update boots after the release whose beacon never comes on air went into slot A: slot A boots
# (its altbeacond exits at once), its gate marks it bad and reboots; the boot script boots slot B,
# whose gate says "rolled back", and the beacon is on air again.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
bt_up
slot=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^rauc\.slot=//p')
say "after_slot=$slot"
if [ "$slot" != B ]; then
  say "badboot_bootstate=$(fw_printenv BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT 2>/dev/null | tr '\n' ' ')"
  sleep 900   # the gate marks this slot bad and reboots
fi
wait_active 120
wait_update 'outcome=rolled-back ' 300
ids
slot_report
# the monitor has published the rollback; the host reads it from the broker after this boot
sleep 10
echo "ABTEST-DONE"

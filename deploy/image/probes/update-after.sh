#!/bin/sh
# Update boots 3+ (after the release whose beacon never comes on air went into slot A): while
# slot A boots (its altbeacond exits at once), the gate reboots it, and each boot spends one of
# its 3 attempts; then the boot script falls back to slot B, the gate says "rolled back", and the
# beacon is on air again.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
bt_up
slot=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^rauc\.slot=//p')
say "after_slot=$slot"
if [ "$slot" != B ]; then
  say "badboot_bootstate=$(fw_printenv BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT 2>/dev/null | tr '\n' ' ')"
  sleep 900   # the gate reboots this slot
fi
wait_active 120
wait_update 'outcome=rolled-back ' 300
ids
slot_report
# the monitor has published the rollback; the host reads it from the broker after this boot
sleep 10
echo "ABTEST-DONE"

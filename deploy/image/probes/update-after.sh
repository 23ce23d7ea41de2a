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
say "rauc=$(rauc status --output-format=shell 2>&1 | grep -E 'RAUC_SYSTEM_BOOTED_BOOTNAME|RAUC_BOOT_PRIMARY|RAUC_SLOT_BOOT_STATUS' | tr '\n' ' ')"
say "heard=$($boot/abtest/observe -i hci1 --hex "$(cat $boot/abtest/on-air.hex)" --count 3 --timeout 30000 2>&1 | wc -l)"
say "version=$(cat /usr/lib/altbeacon-image/version)"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
journalctl -b --no-pager -o cat -u altbeacon-update-gate 2>&1 | tail -5 | while IFS= read -r l; do say "gatejournal=$l"; done
# the monitor has published the rollback; the host reads it from the broker after this boot
sleep 10
echo "ABTEST-DONE"

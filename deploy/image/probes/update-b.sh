#!/bin/sh
# Update boot 2 (slot B, on trial): the gate keeps it once its beacon is on air and its monitor
# connected; the observer hears the beacon; then the host publishes a release whose beacon never
# comes on air, the monitor asks for it, and the host cuts the power while RAUC writes slot A.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
. $boot/abtest/update.env
bt_up
wait_active 120
wait_update 'outcome=installed ' 300
ids
say "rauc=$(rauc status --output-format=shell 2>&1 | grep -E 'RAUC_SYSTEM_BOOTED_BOOTNAME|RAUC_BOOT_PRIMARY|RAUC_SLOT_STATE|RAUC_SLOT_BOOT_STATUS' | tr '\n' ' ')"
say "heard=$($boot/abtest/observe -i hci1 --hex "$(cat $boot/abtest/on-air.hex)" --count 3 --timeout 30000 2>&1 | wc -l)"
say "version=$(cat /usr/lib/altbeacon-image/version)"
say "failed=$(systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
journalctl -b --no-pager -o cat -u altbeacon-update-gate 2>&1 | tail -5 | while IFS= read -r l; do say "gatejournal=$l"; done
# the host publishes a broken release (install: true); the monitor asks for it; the host kills
# the VM 20 s into RAUC's write of slot A: a power cut in the middle of an install
echo "ABTEST-PUBLISH-BAD"
echo "ABTEST-CUT-NEXT"
sleep 900

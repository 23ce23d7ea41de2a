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
slot_report
# the host publishes a broken release (install: true); the monitor asks for it; the host kills
# the VM 20 s into RAUC's write of slot A: a power cut in the middle of an install
echo "ABTEST-PUBLISH-BAD"
echo "ABTEST-CUT-NEXT"
sleep 900

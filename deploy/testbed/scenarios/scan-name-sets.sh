# flavour: bt5
# timeout: 300
# arch: amd64
# (x86_64 only for now, as scan-name.sh: on the aarch64 testbed BlueZ 5.82's discovery on hci1
# answers org.bluez.Error.InProgress.)
# SPEC §12, as scan-name.sh on a Bluetooth 5 controller: one extended advertising set per frame,
# each with the legacy ADV_SCAN_IND properties and the name in its extended scan response;
# BlueZ's Device1.Name on the observer's controller is the hostname, then the configured name.
. "$TB_REPO/deploy/testbed/lib-name.sh"
tbn_scenario "extended, sets"

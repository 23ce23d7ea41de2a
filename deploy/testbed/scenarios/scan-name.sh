# flavour: le
# timeout: 300
# arch: amd64
# (On the aarch64 testbed, BlueZ 5.82's bluetoothctl `scan le` on hci1 answers
# org.bluez.Error.InProgress and no discovery runs, even after LE Set Scan Enable off; not solved
# yet. The named frames run there in every other scenario: the guest has a hostname.)
# SPEC §12, Home Assistant's iBeacon Tracker needs a name: on a legacy-only controller (the frames
# in turn), every frame goes out ADV_SCAN_IND with the beacon's name in its scan response: the
# hostname without `[beacon] name`, the configured name after an edit, none with name = "".
# bluetoothd on the observer's controller (hci1) discovers it: BlueZ's Device1.Name for the
# beacon's address is the name, what Home Assistant's Bluetooth integration reads.
. "$TB_REPO/deploy/testbed/lib-name.sh"
tbn_scenario "legacy, 2 frames in turn"

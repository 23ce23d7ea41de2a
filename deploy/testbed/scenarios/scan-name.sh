# flavour: le
# timeout: 300
# SPEC §12, Home Assistant's iBeacon Tracker needs a name: on a legacy-only controller (the frames
# in turn), every frame goes out ADV_SCAN_IND with the beacon's name in its scan response: the
# hostname without `[beacon] name`, the configured name after an edit, none with name = "".
# bluetoothd on the observer's controller (hci1) discovers it: BlueZ's Device1.Name for the
# beacon's address is the name, what Home Assistant's Bluetooth integration reads.
. "$TB_REPO/deploy/testbed/lib-name.sh"
tbn_scenario "legacy, 2 frames in turn"

# flavour: bt5
# timeout: 300
# arch: amd64
# (x86_64 only: on the aarch64 testbed it ran into its 300 s limit with no output, even after
# observe kept its extended scan enabled; not yet understood)
# SPEC §3: gatt-identity-hold on a Bluetooth 5 controller: the identity has an extended set of
# its own (legacy ADV_IND PDUs) beside the AltBeacon frame's set; the controller ends only the
# identity's set at the connection, the AltBeacon set never stops. A central on hci2 holds the
# link (LE Extended Create Connection) and is disconnected after 30 s; the identity is not
# advertised meanwhile and comes back after; nothing counted as a fault; SIGTERM takes the sets
# off air. (x86_64 only: trixie's btvirt on the aarch64 testbed reports a set only when it is
# enabled, see frames-sets.)
. "$TB_REPO/deploy/testbed/session-lib.sh"
. "$TB_REPO/deploy/testbed/lib-gatt.sh"
tbg_hold_scenario bt5

# flavour: le
# timeout: 300
# SPEC §3: a central that connects to the GATT identity and holds the link is disconnected after
# 30 s, and connectable advertising comes back. On a Bluetooth 5 controller the identity has an
# extended set of its own (legacy ADV_IND PDUs), so the AltBeacon frame's set never stops; while
# the central is connected the identity is not advertised (one central at a time). The
# connection is not a fault: nothing is re-armed for it, no LED fault, no ladder step. SIGTERM
# takes the sets off air.
. "$TB_REPO/deploy/testbed/session-lib.sh"
. "$TB_REPO/deploy/testbed/lib-gatt.sh"
tbg_hold_scenario le

# init: systemd
# timeout: 180
# deploy/bench's boot-to-air: a whole boot of the guest with systemd as PID 1, the beacon started
# by the shipped altbeacond.service (or, with TB_BOOT_UNIT=studyguide, by the study guide's lines
# in a oneshot unit, ordered the same way). Prints "BENCH boot_to_air <ms>": the guest's
# CLOCK_MONOTONIC, i.e. the time since the kernel started, when hci1 first hears the beacon.
. "$TB_REPO/deploy/testbed/lib.sh"
ms=$(tb_wait_heard "$TB_RIG_HEX" 60000) || { echo "BENCH boot_to_air n/a"; tb_fail "beacon not heard"; }
echo "BENCH boot_to_air $ms ${TB_BOOT_UNIT:-altbeacond}"
tb_pass

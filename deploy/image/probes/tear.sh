#!/bin/sh
# The boots after a torn boot-state write (deploy/image/test-image-update.sh, issue 49, -M virt):
# which slot the boot script chose and the boot state Linux reads, then the end.
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
wait_active 120
ids
echo "ABTEST-DONE"

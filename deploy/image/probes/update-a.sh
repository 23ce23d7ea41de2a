#!/bin/sh
# Update boot 1 (deploy/image/test-image-update.sh, -M virt, slot A): sourced by monitor.sh once
# its checks are done (the monitor boot goes on as this one). The state partition's own files as
# they are before any update (the host compares them after the last update boot). Bundles RAUC
# must refuse, asked for as the monitor asks (a request file): signed with another key, for
# another `compatible`, truncated, older than what runs (issue 49), and one whose server cannot be
# reached (tried again, then a failed download). Each must leave the card as it was, its reason in
# the state file. Then the host publishes the fleet's release (install: true) and the monitor asks for it:
# RAUC installs it into slot B over HTTP and the card reboots (the VM ends there).
# shellcheck source=lib.sh
. /boot/firmware/abtest/lib.sh
. $boot/abtest/update.env
ids
say "rauc=$(rauc status --output-format=shell 2>&1 | grep -E 'RAUC_SYSTEM_COMPATIBLE|RAUC_SYSTEM_BOOTED_BOOTNAME|RAUC_BOOT_PRIMARY' | tr '\n' ' ')"
wait_update 'phase=idle' 120
# systemd's own directory aside (its random seed and timer stamps change at every boot)
(cd /persist && find . -path ./lost+found -prune -o -path ./var-lib-systemd -prune -o -type f -print) | sort |
  while IFS= read -r f; do say "statefile=$(sha256sum "/persist/$f" | cut -c1-64) $f"; done
for b in other-key other-compatible truncated; do
  request "version=$b" "url=http://10.0.2.2:$BPORT/$b.raucb"
  wait_update "outcome=refused outcome_version=$b " 180
  say "refused_$b=$(update_state)"
done
# issue 49: an older bundle signed with the fleet's key (a replay): refused by its own version
request "version=0.0.0~old" "url=http://10.0.2.2:$BPORT/older.raucb"
wait_update "outcome=refused outcome_version=0.0.0~old " 180
say "refused_older=$(update_state)"
# a server that cannot be reached: tried again with a back-off (10, 30, 90 s), then a failed download
request "version=9.9.9" "url=http://10.0.2.2:1/gone.raucb"
wait_update "outcome=download-failed outcome_version=9.9.9 " 400
say "download_failed=$(update_state)"
say "bootstate_after_refusals=$(fw_printenv 2>/dev/null | tr '\n' ' ')"
# the monitor connected (the gate's file) before the host publishes the release
i=0
while [ $i -lt 240 ] && ! grep -q connected=1 /run/altbeacon-update/monitor 2>/dev/null; do i=$((i + 1)); sleep 1; done
say "monitorfile=$(cat /run/altbeacon-update/monitor 2>&1)"
echo "ABTEST-PUBLISH-GOOD"
# the monitor's request, RAUC's install, the reboot: the VM ends when the card reboots
sleep 900

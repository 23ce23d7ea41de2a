# flavour: le
# timeout: 180
# SPEC §5 and §12: with the beacon's name (here the hostname, as on a Pi), another process
# overwriting the scan response (what the kernel does with its own local name when bluetoothd
# sets one) is seen on the HCI monitor and repaired like overwritten advertising data: an active
# scan on hci1 hears the beacon's name again (target ≤ 2 s), and the advertising data too.
. "$TB_REPO/deploy/testbed/lib-name.sh"
host=tb-named-beacon
hostname "$host" || tb_fail "cannot set the guest's hostname"
rsp=$(tbn_rsp "$host")
tbd_config
tbd_start
TB_OBSERVER=hci1 "$TB_TOOLS/observe" -i hci1 --active --until-hex "$rsp" --timeout 10000 >/dev/null \
  || { tbd_dump; tb_fail "the name $rsp is not answered by an active scan"; }
t=$(tb_now_ms)
# LE Set Scan Response Data with another name ("intruder"), as another program would.
other=$(tbn_rsp intruder)
# shellcheck disable=SC2046,SC2086
st=$(_tb_hcicmd hci0 0x08 0x0009 $(printf '%02x' $((${#other} / 2))) $(echo "$other" | sed 's/../& /g') $(_tb_zeros $((31 - ${#other} / 2))))
[ "$st" = 00 ] || { tbd_dump; tb_fail "the foreign scan response was refused ($st)"; }
tbd_wait_log "scan response\|overwritten" 10 || { tbd_dump; tb_fail "the daemon did not notice the foreign scan response"; }
TB_OBSERVER=hci1 "$TB_TOOLS/observe" -i hci1 --active --until-hex "$rsp" --timeout 10000 >/dev/null \
  || { tbd_dump; tb_fail "the name was not restored"; }
back=$(($(tb_now_ms) - t))
tb_wait_heard "$TB_RIG_HEX" 5000 >/dev/null || { tbd_dump; tb_fail "the beacon is not heard after the repair"; }
tbd_alive
tbd_finish
tb_pass "scan response overwritten: the name '$host' answered again ${back} ms after the foreign write (target ≤ 2000 ms)"

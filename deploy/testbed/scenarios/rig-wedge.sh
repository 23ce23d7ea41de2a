#!/bin/bash
# rig-wedge: proves the wedged-controller faults of the rig itself, without altbeacond
# (tools/wedge.so preloaded into btvirt). tb_fault_wedge: hci0 stops answering (Read Local
# Version gets no Command Complete, the kernel logs a tx timeout) while hci1 still answers; down +
# up (the kernel's HCI Reset) cures it. tb_fault_wedge_hard: down + up does not cure it (HCIDEVUP
# fails); after tb_fault_unwedge, down + up does.
# timeout: 240
# shellcheck source=../lib.sh
. "$TB_REPO/deploy/testbed/lib.sh"

dump() {
  echo "--- btvirt.log (wedge lines)"; grep 'wedge:' "$TB_STATE/btvirt.log" | tail -20
  echo "--- dmesg (Bluetooth)"; dmesg | grep -i 'bluetooth: hci' | tail -20
}
fail() { dump; tb_fail "$*"; }
# version DEV: the status of Read Local Version Information on DEV ("--": no answer in 5 s)
version() { _tb_hcicmd "$1" 0x04 0x0001; }
# txtimeouts: how many "hci0: command ... tx timeout" lines the kernel log has
txtimeouts() { dmesg 2>/dev/null | grep -cE 'hci0: command (0x1001 )?tx timeout'; }
# cycle DEV: hciconfig DEV down, then up (each bounded by timeout 30); logs how long each took
# (prefixed with the caller's $fl); status: that of "up"
cycle() {
  local t0 t1 rc_down=0 rc_up=0 out
  t0=$(tb_now_ms)
  out=$(timeout 30 hciconfig "$1" down 2>&1) || rc_down=$?
  t1=$(tb_now_ms)
  tb_log "${fl:+[$fl] }hciconfig $1 down: status $rc_down in $((t1 - t0)) ms${out:+: $out}"
  out=$(timeout 30 hciconfig "$1" up 2>&1) || rc_up=$?
  t0=$(tb_now_ms)
  tb_log "${fl:+[$fl] }hciconfig $1 up: status $rc_up in $((t0 - t1)) ms${out:+: $out}"
  return "$rc_up"
}
is_up() { hciconfig "$1" | grep -q '^[[:space:]]*UP '; }

rounds() {  # the whole sequence on the controllers of one btvirt flavour
  local fl=$1 st t0 n0
  hciconfig hci0 up && hciconfig hci1 up || fail "[$fl] cannot bring hci0/hci1 up"
  [ "$(version hci0)" = 00 ] || fail "[$fl] hci0 does not answer before the wedge"
  tb_log "[$fl] hci0 answers Read Local Version (00)"

  # --- soft wedge: swallowed commands, cured by the HCI Reset of down + up
  tb_studyguide_start hci0 >/dev/null || fail "[$fl] study-guide sequence refused"
  n0=$(txtimeouts)
  tb_fault_wedge || fail "[$fl] tb_fault_wedge refused"
  tb_wedged || fail "[$fl] tb_wedged says no wedge after tb_fault_wedge"
  t0=$(tb_now_ms)
  st=$(version hci0)
  [ "$st" = "--" ] || fail "[$fl] wedged hci0 answered Read Local Version: $st"
  tb_log "[$fl] wedged hci0: Read Local Version unanswered ($(($(tb_now_ms) - t0)) ms until timeout 5 gave up)"
  [ "$(version hci1)" = 00 ] || fail "[$fl] hci1 does not answer while hci0 is wedged"
  tb_log "[$fl] hci1 still answers (00)"
  # 6.1 logs "hci0: command 0x1001 tx timeout"; newer kernels may leave the opcode out. A guest
  # whose kernel log has no Bluetooth line at all cannot be read here: say so rather than fail.
  if dmesg 2>/dev/null | grep -qi 'bluetooth'; then
    [ "$(txtimeouts)" -gt "$n0" ] || fail "[$fl] no new 'hci0: command ... tx timeout' in the kernel log"
    tb_log "[$fl] kernel: $(dmesg | grep -E 'hci0: command (0x1001 )?tx timeout' | tail -1)"
  else
    tb_log "[$fl] the kernel log is not readable in this guest: tx timeout not checked"
  fi
  # the emulated radio keeps what the wedged controller advertised
  tb_wait_heard "$TB_RIG_HEX" 5000 >/dev/null || fail "[$fl] hci0's advertising not heard while wedged"
  tb_log "[$fl] wedged hci0's advertising still heard on hci1"
  tb_wedged || fail "[$fl] the soft wedge ended without a Reset"
  cycle hci0 || fail "[$fl] hciconfig hci0 up failed on a soft wedge (its Reset should cure it)"
  tb_assert_silent 1000 "$TB_RIG_HEX"
  ! tb_wedged || fail "[$fl] soft wedge still on after down + up"
  st=$(version hci0)
  [ "$st" = 00 ] || fail "[$fl] hci0 after down + up: Read Local Version status $st, expected 00"
  tb_log "[$fl] soft wedge cured by down + up: hci0 answers again (00), its advertising ended"

  # --- hard wedge: down + up does not cure it
  tb_fault_wedge_hard || fail "[$fl] tb_fault_wedge_hard refused"
  if cycle hci0; then fail "[$fl] hciconfig hci0 up succeeded on a hard-wedged controller"; fi
  tb_wedged || fail "[$fl] the hard wedge ended by itself"
  ! is_up hci0 || fail "[$fl] hci0 UP after a failed HCIDEVUP"
  [ "$(version hci1)" = 00 ] || fail "[$fl] hci1 does not answer while hci0 is hard-wedged"
  tb_log "[$fl] hard wedge: down + up fails, hci0 stays down; hci1 still answers (00)"
  tb_fault_unwedge
  ! tb_wedged || fail "[$fl] tb_wedged still says wedged after tb_fault_unwedge"
  cycle hci0 || fail "[$fl] hciconfig hci0 up failed after tb_fault_unwedge"
  st=$(version hci0)
  [ "$st" = 00 ] || fail "[$fl] hci0 after unwedge + down + up: Read Local Version status $st, expected 00"
  tb_log "[$fl] hard wedge cured by tb_fault_unwedge + down + up: hci0 answers again (00)"
}

rounds le
# a restarted btvirt gives controllers that are not wedged, even if a wedge was on before
tb_fault_wedge_hard || fail "tb_fault_wedge_hard refused"
tb_btvirt_stop || fail "btvirt stop"
tb_btvirt_start bt5 || fail "btvirt bt5 did not give hci0 and hci1"
! tb_wedged || fail "wedge still on after btvirt restarted"
rounds bt5
dump
tb_pass "wedge (le and bt5): the soft one is cured by down + up, the hard one only by tb_fault_unwedge; hci1 unaffected"

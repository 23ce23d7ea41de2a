# SPEC §4 with a status and a fault LED (active-high, chip by label, lines by name): each row
# observed by sampling the line levels; SIGTERM leaves both lines released and dark.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
S=17 F=27

led_steady() {  # LINE MS on|off WHAT
  local r; r=$(tb_gpio_sample "$1" "$2")
  [ "$r" = "$3" ] || { tbd_dump; tb_fail "$4: line $1 is '$r', expected $3"; }
  tb_log "$4: line $1 $r"
}
led_blink() {  # LINE MS HZ_MIN HZ_MAX HIGH%_MIN HIGH%_MAX WHAT
  local r; r=$(tb_gpio_sample "$1" "$2")
  echo "$r" | awk -v a="$3" -v b="$4" -v c="$5" -v d="$6" \
    '$1 == "blink" && $2 >= a && $2 <= b && $3 >= c && $3 <= d {ok = 1} END {exit !ok}' \
    || { tbd_dump; tb_fail "$7: line $1 is '$r', expected blink $3-$4 Hz, $5-$6% high"; }
  tb_log "$7: line $1 $r"
}

tbd_config "$(tbd_leds)"
tbd_start
[ "$(tb_gpio_consumer $S)" = altbeacond ] || { tbd_dump; tb_fail "status line consumer is '$(tb_gpio_consumer $S)'"; }
[ "$(tb_gpio_consumer $F)" = altbeacond ] || { tbd_dump; tb_fail "fault line consumer is '$(tb_gpio_consumer $F)'"; }

# advertising: status steady on, fault off
led_steady $S 1500 on advertising
led_steady $F 1500 off advertising

# advertising, last edit refused: status on, fault blinks about 1 Hz
tbd_config "$(tbd_leds)" "[bluetooth]" "interval_ms = 5"
tbd_wait_log "config edit refused" 5 || { tbd_dump; tb_fail "the bad edit was not refused"; }
led_blink $F 3500 0.7 1.4 35 65 "refused edit"
led_steady $S 1500 on "refused edit"
tb_wait_heard "$TB_RIG_HEX" 3000 >/dev/null || { tbd_dump; tb_fail "beacon off air after a refused edit"; }

# a good edit: back to advertising, fault dark, no timer left blinking it
tbd_config "$(tbd_leds)"
tbd_wait_log "config accepted again" 5 || { tbd_dump; tb_fail "the good edit was not taken"; }
led_steady $F 1500 off "edit accepted"
led_steady $S 1000 on "edit accepted"

# adapter blocked: status off, fault steady on
tb_fault_rfkill_block
tbd_wait_log "blocked by rfkill" 10 || { tbd_dump; tb_fail "the block was not noticed"; }
led_steady $F 1500 on "adapter fault"
led_steady $S 1500 off "adapter fault"
tb_fault_rfkill_unblock
tb_wait_heard "$TB_RIG_HEX" 10000 >/dev/null || { tbd_dump; tb_fail "beacon not back after unblock"; }
led_steady $S 1000 on "after unblock"
led_steady $F 1000 off "after unblock"

# stopped: released, dark
tbd_finish
for l in $S $F; do
  c=$(tb_gpio_consumer $l); [ -z "$c" ] || tb_fail "line $l still held by '$c' after SIGTERM"
  v=$(tb_gpio_level $l); [ "$v" = 0 ] || tb_fail "line $l at level $v after SIGTERM, expected dark (0)"
done
tb_log "stopped: lines $S and $F released, level 0"
cat /tmp/altbeacond.log
tb_pass "two LEDs: every SPEC §4 row seen on GPIO$S/GPIO$F; released dark on SIGTERM"

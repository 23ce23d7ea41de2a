# SPEC §4 with only a status LED, wired active-low (lit at level 0), chip by path, line by offset:
# steady on; on with a short off-blink every second (refused edit); a short flash every 2 s
# (adapter fault); released and dark (level 1) on SIGTERM.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
S=17

led_steady() {  # LINE MS 0|1 (raw level) WHAT
  local r want; r=$(tb_gpio_sample "$1" "$2")
  want=$([ "$3" = 1 ] && echo on || echo off)
  [ "$r" = "$want" ] || { tbd_dump; tb_fail "$4: line $1 is '$r', expected steady level $3"; }
  tb_log "$4: line $1 $r (raw)"
}
led_blink() {  # LINE MS HZ_MIN HZ_MAX HIGH%_MIN HIGH%_MAX WHAT (raw levels)
  local r; r=$(tb_gpio_sample "$1" "$2")
  echo "$r" | awk -v a="$3" -v b="$4" -v c="$5" -v d="$6" \
    '$1 == "blink" && $2 >= a && $2 <= b && $3 >= c && $3 <= d {ok = 1} END {exit !ok}' \
    || { tbd_dump; tb_fail "$7: line $1 is '$r', expected blink $3-$4 Hz, $5-$6% high (raw)"; }
  tb_log "$7: line $1 $r (raw)"
}
leds() { printf '%s\n' "[leds]" "chip = \"$TB_GPIOCHIP\"" "status = $S" "active_low = true"; }

# an active-low LED hangs off a pull-up: a released line reads high (dark)
tb_gpio_pull $S up
tbd_config "$(leds)"
tbd_start
[ "$(tb_gpio_consumer $S)" = altbeacond ] || { tbd_dump; tb_fail "line $S consumer is '$(tb_gpio_consumer $S)'"; }

led_steady $S 1500 0 "advertising (lit = 0)"

# refused edit: lit, dark for a moment every second: ~1 Hz, mostly low
tbd_config "$(leds)" "[bluetooth]" "interval_ms = 5"
tbd_wait_log "config edit refused" 5 || { tbd_dump; tb_fail "the bad edit was not refused"; }
led_blink $S 3500 0.7 1.4 5 30 "refused edit"
tbd_config "$(leds)"
tbd_wait_log "config accepted again" 5 || { tbd_dump; tb_fail "the good edit was not taken"; }
led_steady $S 1200 0 "edit accepted"

# adapter fault: dark, a short flash every 2 s: ~0.5 Hz, mostly high
tb_fault_rfkill_block
tbd_wait_log "blocked by rfkill" 10 || { tbd_dump; tb_fail "the block was not noticed"; }
sleep 3   # let the first quick retries (each one shows re-arming) back off to the steady retry
led_blink $S 6500 0.3 0.7 75 97 "adapter fault"
tb_fault_rfkill_unblock
tb_wait_heard "$TB_RIG_HEX" 10000 >/dev/null || { tbd_dump; tb_fail "beacon not back after unblock"; }
led_steady $S 1000 0 "after unblock"

tbd_finish
c=$(tb_gpio_consumer $S); [ -z "$c" ] || tb_fail "line $S still held by '$c' after SIGTERM"
v=$(tb_gpio_level $S); [ "$v" = 1 ] || tb_fail "line $S at level $v after SIGTERM, expected dark (1)"
tb_log "stopped: line $S released at level 1 (dark)"
tb_pass "one active-low LED: SPEC §4 single-LED column seen on line $S; released dark on SIGTERM"

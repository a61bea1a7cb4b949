# rmmod under load: sparse and dense THPs paged out in a loop by two
# processes while the module is loaded with adaptive/always, unloaded,
# loaded again and unloaded. Every round reads back intact, the console
# stays clean (run.sh), and every hook is off at the end.
. /lib.sh
thp_setup zram adaptive always
rm -f /tmp/bgfail
load_loop() {	# SEED DIRTY
	i=0
	while [ ! -e /tmp/stop ]; do
		i=$((i + 1))
		thp_sparse --size 16 --dirty "$2" --seed $(($1 + i)) >/tmp/bg.$1 2>&1 ||
			{ cat /tmp/bg.$1 >>/tmp/bgfail; return; }
	done
	echo $i >/tmp/rounds.$1
}
rm -f /tmp/stop
load_loop 100 1 &
a=$!
load_loop 200 512 &
b=$!
sleep 3
unload_mmtune
info "unloaded under load"
sleep 2
load_mmtune
thp_policy adaptive
split_zero_mode always
sleep 3
unload_mmtune
touch /tmp/stop
wait $a $b
[ -e /tmp/bgfail ] && { cat /tmp/bgfail; fail "a round under load failed"; }
assert_ge "$(cat /tmp/rounds.100)" 2 "sparse rounds under load"
assert_ge "$(cat /tmp/rounds.200)" 2 "dense rounds under load"
assert_hooks_idle

# Helpers sourced by the guest tests (/tests/*.sh).
MMTUNE_KO=/mmtune/mmtune.ko
PROBE_KO=/mmtune/mmtune_probe.ko
MMTUNE_SYSFS=/sys/kernel/mm/mmtune
HOOKS_STATE=/sys/kernel/debug/mmtune_hooks
# The kernel's feature groups, from the hook core itself (not a list here).
FEATURES=$(echo $(awk '$1 != "abi_version" && $1 != "registered" && $1 != "hook" { print $1 }' "$HOOKS_STATE" 2>/dev/null))
# The knob table: every file of /sys/kernel/mm/mmtune (sysfs-docs/knobs.tsv).
KNOBS=/sysfs-docs/knobs.tsv
# The kernel line running (6.1, 6.12): the table's "lines" column.
MMTUNE_LINE=$(uname -r | cut -d. -f1,2)
# knob_rows [DIR]: the table's rows (of DIR) on this kernel line, tab
# separated, without the lines column, no comments.
knob_rows() {
	awk -F'\t' -v d="${1:-}" -v line="$MMTUNE_LINE" '!/^#/ && $1 != "dir" &&
		(d == "" || $1 == d) && index(" " $8 " ", " " line " ") {
		print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 }' "$KNOBS"
}

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 4; }
info() { echo "$*"; }

# assert_eq ACTUAL EXPECTED WHAT
assert_eq() {
	[ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
	info "ok: $3 = '$2'"
}

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# hooks_state KEY: a line of /sys/kernel/debug/mmtune_hooks
hooks_state() { awk -v k="$1" '$1 == k { print $2 }' "$HOOKS_STATE"; }

assert_hooks_idle() {
	assert_eq "$(hooks_state registered)" "-" "hook core registrant"
	for f in $FEATURES; do
		assert_eq "$(hooks_state "$f")" off "static key $f"
	done
	[ ! -e "$MMTUNE_SYSFS" ] || fail "$MMTUNE_SYSFS exists with no module loaded"
}

load_mmtune() { insmod "$MMTUNE_KO" "$@" || fail "insmod mmtune.ko"; }
unload_mmtune() { rmmod mmtune || fail "rmmod mmtune"; }

# insmod_error KO [ARGS]: a load expected to fail; prints the kernel's error
# name (EBUSY, EINVAL...). One finit_module() call, so one refusal logged.
insmod_error() {
	if out=$(modload "$@" 2>&1); then
		fail "loading $* succeeded, expected a refusal"
	fi
	echo "$out"
}

swapoff_all() { swapoff -a 2>/dev/null; for d in /dev/zram0 /dev/vda; do swapoff "$d" 2>/dev/null; done; true; }

# The virtio disk is rotational to qemu; 6.1 only allocates whole THP swap
# clusters on non-rotational devices, so say it is an SSD.
swapon_disk() {
	swapoff_all
	echo 0 >/sys/block/vda/queue/rotational
	mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
	swapon /dev/vda || fail "swapon /dev/vda"
}

swapon_zram() {
	swapoff_all
	size=${1:-1G}
	echo 1 >/sys/block/zram0/reset
	echo "$size" >/sys/block/zram0/disksize || fail "zram disksize"
	mkswap /dev/zram0 >/dev/null || fail "mkswap /dev/zram0"
	swapon /dev/zram0 || fail "swapon /dev/zram0"
}

thp_always() { echo always >/sys/kernel/mm/transparent_hugepage/enabled; }

# assert_ge ACTUAL MIN WHAT / assert_le ACTUAL MAX WHAT
assert_ge() {
	[ "$1" -ge "$2" ] 2>/dev/null || fail "$3: got '$1', expected >= $2"
	info "ok: $3 = $1 (>= $2)"
}
assert_le() {
	[ "$1" -le "$2" ] 2>/dev/null || fail "$3: got '$1', expected <= $2"
	info "ok: $3 = $1 (<= $2)"
}

# assert_grows WHAT SECONDS CMD...: the number CMD prints grows within
# SECONDS. For counters that a background load moves only in some of its
# phases: a fixed sleep between two reads misses them on a fast host.
assert_grows() {
	_what=$1 _secs=$2
	shift 2
	_v0=$("$@") _n=0
	while [ "$("$@")" -le "$_v0" ] 2>/dev/null; do
		_n=$((_n + 1))
		[ $_n -gt $((_secs * 10)) ] && fail "$_what: stayed at '$_v0' for ${_secs}s"
		sleep 0.1
	done
	info "ok: $_what: $_v0 -> $("$@") within $((_n / 10)).$((_n % 10))s"
}

# assert_write_ok FILE VALUE: the write succeeds and reads back as VALUE.
assert_write_ok() {
	printf '%s\n' "$2" >"$1" || fail "writing '$2' to $1 failed"
	assert_eq "$(cat "$1")" "$2" "$1 after writing '$2'"
}

# assert_write_rejected FILE VALUE: EINVAL, and the old value stays.
assert_write_rejected() {
	old=$(cat "$1")
	assert_eq "$(sysfs_write "$1" "$2")" EINVAL "writing '$2' to $1"
	assert_eq "$(cat "$1")" "$old" "$1 kept after rejected '$2'"
}

# si_delta OUTPUT NAME: a value of swap_integrity's "deltas:" line.
si_delta() {
	awk -v k="$2" '/^deltas:/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$1"
}

# One helper file per feature, lib-<feature>.sh.
for _lib in /lib-*.sh; do
	[ -r "$_lib" ] && . "$_lib"
done
unset _lib

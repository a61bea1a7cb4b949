#!/bin/sh
# Guest side of tests/packaging/grub-pin.sh: a Debian 13 root with Debian's
# cloud kernel and ours beside it (Debian's a higher 6.12 sublevel), on an
# MBR-partitioned disk. One image booted three times; the phase is kept in
# /var/lib/mmtune-e2e/phase:
#   setup     (boot 1, the stock kernel given to qemu directly) what the
#             cloud image's build did: grub-install /dev/vda and
#             update-grub, GRUB_DEFAULT untouched
#   unpinned  (boot 2, through GRUB) the stock kernel runs: GRUB's default
#             without the pin; then packaging/README.md's recipe, as
#             written there (recipe.sh, without its final reboot): the
#             saved_entry in grubenv is the recipe's id, and both parts of
#             the id are entries in grub.cfg
#   pinned    (boot 3, through GRUB) ours runs; saved_entry unchanged
# TAP on /dev/ttyS1; run by mmtune-e2e.service after multi-user.target.
# shellcheck source=tests/packaging/guest/e2e-lib.sh
. /usr/local/lib/mmtune-e2e/e2e-lib.sh
stock=$(cat $dir/expected-stock-release)
uuid=$(cat $dir/expected-uuid)
state=/var/lib/mmtune-e2e
mkdir -p $state
phase=$(cat $state/phase 2>/dev/null || echo setup)
want_id="gnulinux-advanced-$uuid>gnulinux-$rel-advanced-$uuid"

# booted RELEASE WHY: the running kernel is RELEASE, and GRUB loaded it
# (BOOT_IMAGE= is what GRUB's "linux" command puts first on the command
# line; qemu -kernel does not).
booted() {
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s; /proc/cmdline: $(cat /proc/cmdline)"
	if [ "$(uname -r)" = "$1" ] && grep -q "^BOOT_IMAGE=/boot/vmlinuz-$1 " /proc/cmdline; then
		tap_ok "$2: GRUB booted $1 (uname -r, BOOT_IMAGE=/boot/vmlinuz-$1)"
	else
		tap_not_ok "$2: GRUB booted $1 (got $(uname -r))"
	fi
}

# saved_entry_checks: grubenv's saved_entry is the recipe's id, and grub.cfg
# has the submenu and the menu entry it names.
saved_entry_checks() {
	env=$(grub-editenv list 2>&1)
	tap_diag "grub-editenv list: $env"
	if echo "$env" | grep -qxF "saved_entry=$want_id"; then
		tap_ok "grub-editenv list: saved_entry=$want_id"
	else
		tap_not_ok "grub-editenv list: saved_entry=$want_id"
	fi
	if grep -q "^submenu .* \$menuentry_id_option 'gnulinux-advanced-$uuid' {" /boot/grub/grub.cfg &&
		grep -q "^	menuentry .* \$menuentry_id_option 'gnulinux-$rel-advanced-$uuid' {" /boot/grub/grub.cfg; then
		tap_ok "grub.cfg has submenu gnulinux-advanced-$uuid and in it menu entry gnulinux-$rel-advanced-$uuid"
	else
		tap_not_ok "grub.cfg has submenu gnulinux-advanced-$uuid and in it menu entry gnulinux-$rel-advanced-$uuid"
		tap_diag "$(grep -E '^[[:space:]]*(submenu|menuentry) ' /boot/grub/grub.cfg)"
	fi
}

case $phase in
setup)
	tap_diag "booted $(uname -r) (qemu -kernel) in $(cut -d' ' -f1 /proc/uptime)s"
	out=$(grub-install /dev/vda 2>&1); rc=$?
	tap_diag "$out"
	tap_result $rc "setup: grub-install /dev/vda (i386-pc, the MBR and the gap before partition 1)"
	out=$(update-grub 2>&1); rc=$?
	tap_diag "$out"
	tap_result $rc "setup: update-grub without the pin"
	tap_diag "grub.cfg's entries: $(grep -E '^[[:space:]]*(submenu|menuentry) ' /boot/grub/grub.cfg | sed "s/ --class.*menuentry_id_option/ id/; s/ {\$//")"
	# GRUB_DEFAULT=0: the first entry, the highest version's.
	first=$(grep -m 1 -E '^(menuentry|submenu) ' /boot/grub/grub.cfg)
	first_linux=$(grep -m 1 -E '^[[:space:]]+linux[[:space:]]' /boot/grub/grub.cfg | awk '{ print $2 }')
	if echo "$first" | grep -q "'gnulinux-simple-$uuid'" && [ "$first_linux" = "/boot/vmlinuz-$stock" ]; then
		tap_ok "setup: grub.cfg's first entry is gnulinux-simple-$uuid (the root's UUID) with /boot/vmlinuz-$stock"
	else
		tap_not_ok "setup: grub.cfg's first entry is gnulinux-simple-$uuid with /boot/vmlinuz-$stock (got $first_linux)"
	fi
	if grep -q '^GRUB_DEFAULT=0$' /etc/default/grub && ! grep -rqs GRUB_DEFAULT /etc/default/grub.d/; then
		tap_ok "setup: GRUB_DEFAULT=0 (Debian's /etc/default/grub), no grub.d snippet sets it"
	else
		tap_not_ok "setup: GRUB_DEFAULT=0, no grub.d snippet sets it"
	fi
	echo unpinned >$state/phase
	;;
unpinned)
	booted "$stock" "without the pin"
	out=$(sh -ex $dir/recipe.sh 2>&1); rc=$?
	tap_diag "packaging/README.md's recipe:"; tap_diag "$out"
	tap_result $rc "the recipe ran: GRUB_DEFAULT=saved, update-grub, grub-set-default"
	saved_entry_checks
	echo pinned >$state/phase
	;;
pinned)
	booted "$rel" "with the pin"
	saved_entry_checks
	echo finished >$state/phase
	;;
*)
	tap_not_ok "a known phase (got '$phase')"
	;;
esac
no_failed_units
echo "# e2e: done" >&3

# Best case on zram: one dirty subpage per THP, policy adaptive, zero
# detection in reclaim. pswpout is about the number of dirty subpages,
# the zero subpages map the zero page and are not written, every byte
# reads back (dirty bytes as written, the rest zero).
# tier: check
. /lib.sh
require_feature thp_swap split_zero
thp_best_case zram
unload_mmtune

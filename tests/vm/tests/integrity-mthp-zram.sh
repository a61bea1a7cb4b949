# The round trips of integrity-mthp-disk against zram: 16K, 64K and 2M folios,
# anonymous and shmem, paged out whole to zram and read back equal.
# timeout: 600
# tier: check
. /lib.sh
mthp_require 16 64 2048
swapon_zram 1G
mthp_integrity zram
swapoff_all

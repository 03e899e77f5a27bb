# The verdict cache (tests/kernel/t_cache.sh) on the fallback tier, where
# it is keyed by the inode's address (sbx_ll_vcache, sbx_ll_inode_free)
# and mount changes reach it through fentry on security_*mount*. core.yaml
# with a name rule, so that sbx_ll_file_open decides reads
# (SBX_PF_DECIDE_OPENS) and Landlock does not answer for it.
CACHE_POL=/tmp/cache-core.yaml
sed '0,/^  rules:$/s||  rules:\n    - {path: "*.never-made", access: read, verdict: deny, reason: "test: reads by the program"}|' \
	$POL/core.yaml >$CACHE_POL
chmod 644 $CACHE_POL
. "$ROOT/tests/kernel/t_cache.sh"

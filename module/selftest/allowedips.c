// SPDX-License-Identifier: GPL-2.0
/* Included at the end of allowedips.c in debug builds. */

#include <linux/inet.h>

struct aip_case {
	const char *addr;
	u8 cidr;
	int peer;
};

/* Inserted in this order; later entries take prefixes from earlier ones. */
static const struct aip_case aip_inserts[] __initconst = {
	{ "10.0.0.0", 8, 1 }, { "10.1.0.0", 16, 2 }, { "10.1.2.3", 32, 3 },
	{ "10.128.0.0", 9, 4 }, { "0.0.0.0", 0, 5 }, { "192.168.1.0", 24, 6 },
	{ "192.168.1.128", 25, 7 }, { "10.1.0.0", 16, 8 },
	{ "fd00::", 8, 1 }, { "fd00:1::", 32, 2 }, { "fd00:1::1", 128, 3 },
	{ "2001:db8::", 32, 4 },
};

static const struct aip_case aip_lookups[] __initconst = {
	{ "10.2.3.4", 0, 1 }, { "10.1.9.9", 0, 8 }, { "10.1.2.3", 0, 3 },
	{ "10.1.2.4", 0, 8 }, { "10.200.0.1", 0, 4 }, { "11.0.0.1", 0, 5 },
	{ "192.168.1.1", 0, 6 }, { "192.168.1.200", 0, 7 },
	{ "fd00:2::1", 0, 1 }, { "fd00:1::2", 0, 2 }, { "fd00:1::1", 0, 3 },
	{ "2001:db8:1::1", 0, 4 }, { "2001:db9::1", 0, 0 },
};

static int __init aip_parse(const char *text, u8 addr[16])
{
	if (in4_pton(text, -1, addr, -1, NULL))
		return AF_INET;
	if (in6_pton(text, -1, addr, -1, NULL))
		return AF_INET6;
	return -EINVAL;
}

/* Half the insertions from reserved nodes, half allocating their own. */
static bool __init aip_insert_all(struct ftv_allowedips *table,
				  struct ftv_peer *peers)
{
	struct ftv_allowedips_reserve reserve;
	bool ok = true;
	u8 addr[16];
	size_t i;

	if (ftv_allowedips_reserve(&reserve, ARRAY_SIZE(aip_inserts) / 2))
		return false;
	for (i = 0; i < ARRAY_SIZE(aip_inserts) && ok; ++i) {
		const struct aip_case *c = &aip_inserts[i];

		ok = !ftv_allowedips_insert(table, aip_parse(c->addr, addr),
					    addr, c->cidr, &peers[c->peer],
					    i % 2 ? NULL : &reserve);
	}
	ftv_allowedips_unreserve(&reserve);
	return ok;
}

static bool __init aip_run(struct ftv_allowedips *table, struct ftv_peer *peers)
{
	struct ftv_peer *found;
	bool ok = true;
	u8 addr[16];
	size_t i;

	if (!aip_insert_all(table, peers))
		return false;
	for (i = 0; i < ARRAY_SIZE(aip_lookups); ++i) {
		const struct aip_case *c = &aip_lookups[i];

		rcu_read_lock_bh();
		found = ftv_allowedips_lookup(table, aip_parse(c->addr, addr),
					      addr);
		rcu_read_unlock_bh();
		if (found != (c->peer ? &peers[c->peer] : NULL)) {
			pr_err("allowedips self-test: %s\n", c->addr);
			ok = false;
		}
	}
	/* Removing peer 8 makes 10.1/16 fall back to 10/8. */
	ftv_allowedips_remove_by_peer(table, &peers[8]);
	aip_parse("10.1.9.9", addr);
	rcu_read_lock_bh();
	found = ftv_allowedips_lookup(table, AF_INET, addr);
	rcu_read_unlock_bh();
	if (found != &peers[1]) {
		pr_err("allowedips self-test: removal\n");
		ok = false;
	}
	return ok;
}

/**
 * ftv_allowedips_selftest - check longest-prefix matching and removal
 *
 * Return: true if every lookup found the expected peer.
 */
bool __init ftv_allowedips_selftest(void)
{
	struct ftv_allowedips table;
	struct ftv_peer *peers;
	struct mutex lock; /* stands in for the device's update lock */
	bool ok;
	int i;

	peers = kcalloc(9, sizeof(*peers), GFP_KERNEL);
	if (!peers)
		return false;
	for (i = 0; i < 9; ++i)
		INIT_LIST_HEAD(&peers[i].allowedips_list);
	mutex_init(&lock);
	ftv_allowedips_init(&table, &lock);
	mutex_lock(&lock);
	ok = aip_run(&table, peers);
	for (i = 0; i < 9; ++i)
		ftv_allowedips_remove_by_peer(&table, &peers[i]);
	ok = ok && !rcu_access_pointer(table.root4) &&
	     !rcu_access_pointer(table.root6);
	mutex_unlock(&lock);
	rcu_barrier();
	kfree(peers);
	if (ok)
		pr_info("allowedips self-tests: pass\n");
	return ok;
}

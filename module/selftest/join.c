// SPDX-License-Identifier: GPL-2.0
/* Included at the end of join.c in debug builds. */

/* Look up number @index's token and take it; @expect is what must come of
 * it. A token not in the table at all counts as FTV_JOIN_UNKNOWN.
 */
static bool __init join_case(struct ftv_join_window *w, u32 index,
			     enum ftv_join_result expect)
{
	u64 token = ftv_join_token(&w->key, index);
	enum ftv_join_result got = FTV_JOIN_UNKNOWN;
	struct ftv_join_entry *e;
	u32 taken = 0;

	rcu_read_lock();
	e = ftv_join_lookup(w->table, token);
	if (e) {
		spin_lock_bh(w->lock);
		got = ftv_join_take(e, token, &taken);
		spin_unlock_bh(w->lock);
	}
	rcu_read_unlock();
	if (got != expect || (got == FTV_JOIN_OK && taken != index)) {
		pr_err("join self-test: number %u gave %d (number %u), not %d\n",
		       index, got, taken, expect);
		return false;
	}
	return true;
}

struct join_case {
	u32 index;
	enum ftv_join_result expect;
};

/* In steps of the window's width, A: after 1 is taken it holds 2 to A + 1. */
#define A FTV_JOIN_AHEAD

static const struct join_case join_cases[] __initconst = {
	{ 1, FTV_JOIN_OK }, { 1, FTV_JOIN_REPLAYED },
	{ A + 2, FTV_JOIN_UNKNOWN },		/* beyond the window */
	{ 3, FTV_JOIN_OK },			/* 2 is given up */
	{ 2, FTV_JOIN_UNKNOWN }, { 1, FTV_JOIN_REPLAYED },
	{ 3, FTV_JOIN_REPLAYED }, { A + 2, FTV_JOIN_OK },
	{ A + 3, FTV_JOIN_OK },
	{ 2 * A + 3, FTV_JOIN_OK },		/* the farthest it holds */
	{ 2 * A + 4, FTV_JOIN_OK }, { 2 * A + 5, FTV_JOIN_OK },
	{ 2 * A + 6, FTV_JOIN_OK }, { 2 * A + 7, FTV_JOIN_OK },
	{ 2 * A + 8, FTV_JOIN_OK }, { 2 * A + 9, FTV_JOIN_OK },
	{ 2 * A + 10, FTV_JOIN_OK }, { 2 * A + 11, FTV_JOIN_OK },
	{ 2 * A + 12, FTV_JOIN_OK }, { 2 * A + 13, FTV_JOIN_OK },
	{ 2 * A + 14, FTV_JOIN_OK }, { 2 * A + 15, FTV_JOIN_OK },
	{ 2 * A + 16, FTV_JOIN_OK },
	{ 1, FTV_JOIN_UNKNOWN },		/* out of the used ring */
	{ 3, FTV_JOIN_UNKNOWN }, { A + 2, FTV_JOIN_REPLAYED },
	{ 2 * A + 16, FTV_JOIN_REPLAYED },
	{ 2 * A + 17, FTV_JOIN_OK },
};

#undef A

/**
 * ftv_join_selftest - a window's tokens taken, passed over and replayed
 *
 * Return: true if every case behaves as expected and stopping the window
 * empties the table.
 */
bool __init ftv_join_selftest(void)
{
	static const siphash_key_t key = { { 0x0706050403020100ULL,
					     0x0f0e0d0c0b0a0908ULL } };
	/* Not on the stack: the table has a work item, which the
	 * debug-objects checker wants in memory it tracks.
	 */
	struct {
		struct ftv_join_window w;
		struct rhashtable table;
		spinlock_t lock; /* the window's owner's */
	} *t;
	bool ok = true;
	size_t i;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t || ftv_join_table_init(&t->table)) {
		kfree(t);
		return false;
	}
	spin_lock_init(&t->lock);
	spin_lock_bh(&t->lock);
	ok = !ftv_join_window_start(&t->w, &t->table, &t->lock, &key);
	spin_unlock_bh(&t->lock);
	if (ftv_join_token(&key, 1) == ftv_join_token(&key, 2))
		ok = false;
	for (i = 0; ok && i < ARRAY_SIZE(join_cases); i++)
		ok = join_case(&t->w, join_cases[i].index,
			       join_cases[i].expect);
	spin_lock_bh(&t->lock);
	ftv_join_window_stop(&t->w);
	spin_unlock_bh(&t->lock);
	if (atomic_read(&t->table.nelems)) {
		pr_err("join self-test: %d tokens left after stopping\n",
		       atomic_read(&t->table.nelems));
		ok = false;
	}
	synchronize_rcu();
	ftv_join_table_uninit(&t->table);
	kfree(t);
	if (ok)
		pr_info("join self-tests: pass\n");
	return ok;
}

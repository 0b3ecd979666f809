// SPDX-License-Identifier: GPL-2.0
/*
 * Join tokens. A session's join key J comes out of its key exchange; the
 * SYN of its connection number n (n >= 1) carries
 *
 *	t = SipHash-2-4(J, le64(n) || "ftv join")
 *
 * as ISN (low 32 bits) and timestamp (high 32 bits). Without J the fields
 * are as uniform as any SYN's, and no two connections of a session have
 * related ones.
 *
 * The responder keeps, for each session that may be joined, the tokens of
 * the next FTV_JOIN_AHEAD numbers in one hash table per device, so that a
 * SYN costs one lookup. Taking a token slides the window past it (the
 * initiator never goes back to a lower number) and moves the token to a
 * ring of used ones, where a replay of it is recognised and counted. The
 * slots are the window's own and are reused as it slides: a reader who
 * found one under RCU checks it again under the owner's lock. A reader
 * that misses a token because its slot was moved costs a join, not
 * safety: the initiator tries the next number.
 */

#include "join.h"

#include <linux/lockdep.h>
#include <linux/rhashtable.h>

/* "ftv join", little-endian */
#define FTV_JOIN_LABEL 0x6e696f6a20767466ULL

static const struct rhashtable_params join_params = {
	.key_len = sizeof(u64),
	.key_offset = offsetof(struct ftv_join_entry, token),
	.head_offset = offsetof(struct ftv_join_entry, node),
	.automatic_shrinking = true,
};

/**
 * ftv_join_token - the token of a session's join number @index
 * @key: the session's join key
 * @index: the join's number, 1 or more
 *
 * Return: the token; its low half is the SYN's ISN, its high half the
 * SYN's timestamp (ftv_join_syn_token()).
 */
u64 ftv_join_token(const siphash_key_t *key, u32 index)
{
	return siphash_2u64(index, FTV_JOIN_LABEL, key);
}

/**
 * ftv_join_table_init - a device's table of expected tokens
 * @table: the table
 *
 * Return: 0 or a negative errno.
 */
int ftv_join_table_init(struct rhashtable *table)
{
	return rhashtable_init(table, &join_params);
}

/**
 * ftv_join_table_uninit - free it; every window must be stopped
 * @table: the table
 */
void ftv_join_table_uninit(struct rhashtable *table)
{
	WARN_ON(atomic_read(&table->nelems));
	rhashtable_destroy(table);
}

static void slot_remove(struct ftv_join_window *w, struct ftv_join_entry *e)
{
	if (!e->hashed)
		return;
	rhashtable_remove_fast(w->table, &e->node, join_params);
	e->hashed = false;
}

static int slot_insert(struct ftv_join_window *w, struct ftv_join_entry *e,
		       u32 index, bool used)
{
	int ret;

	e->window = w;
	e->index = index;
	e->used = used;
	e->token = ftv_join_token(&w->key, index);
	ret = rhashtable_insert_fast(w->table, &e->node, join_params);
	e->hashed = !ret;
	return ret;
}

/* Whether the slots ahead hold @index already. */
static bool ahead_has(const struct ftv_join_window *w, u32 index)
{
	unsigned int i;

	for (i = 0; i < FTV_JOIN_AHEAD; i++)
		if (w->ahead[i].hashed && w->ahead[i].index == index)
			return true;
	return false;
}

/* Fill the free slots ahead with the numbers from w->next on that are
 * missing. Return: 0, or the error of the first that could not go in.
 */
static int ahead_fill(struct ftv_join_window *w)
{
	unsigned int i, slot = 0;
	int ret = 0;
	u32 index;

	for (i = 0; i < FTV_JOIN_AHEAD; i++) {
		index = w->next + i;
		if (ahead_has(w, index))
			continue;
		while (slot < FTV_JOIN_AHEAD && w->ahead[slot].hashed)
			slot++;
		if (slot == FTV_JOIN_AHEAD)
			break;
		ret = slot_insert(w, &w->ahead[slot], index, false) ?: ret;
	}
	return ret;
}

/**
 * ftv_join_window_start - expect the first joins of a session
 * @w: the window, zeroed, in the session
 * @table: the device's table
 * @lock: the lock the window's owner holds whenever it changes it
 * @key: the session's join key
 *
 * Call with @lock held. Return: 0, or -ENOMEM (or -EEXIST, for a token
 * another session has, with odds of 2^-64) when a token could not go in:
 * the window then expects nothing.
 */
int ftv_join_window_start(struct ftv_join_window *w, struct rhashtable *table,
			  spinlock_t *lock, const siphash_key_t *key)
{
	int ret;

	lockdep_assert_held(lock);
	w->key = *key;
	w->table = table;
	w->lock = lock;
	w->next = 1;
	w->used_pos = 0;
	w->live = true;
	ret = ahead_fill(w);
	if (ret)
		ftv_join_window_stop(w);
	return ret;
}

/**
 * ftv_join_window_stop - expect nothing more
 * @w: a window that was started, or a zeroed one
 *
 * Call with the window's lock held. The window's memory must outlive
 * readers who may have found its slots: free it an RCU grace period later.
 */
void ftv_join_window_stop(struct ftv_join_window *w)
{
	unsigned int i;

	if (!w->table)
		return;
	lockdep_assert_held(w->lock);
	w->live = false;
	for (i = 0; i < FTV_JOIN_AHEAD; i++)
		slot_remove(w, &w->ahead[i]);
	for (i = 0; i < FTV_JOIN_USED; i++)
		slot_remove(w, &w->used[i]);
	memzero_explicit(&w->key, sizeof(w->key));
}

/**
 * ftv_join_lookup - the entry a SYN's token names, if any
 * @table: the device's table
 * @token: ftv_join_syn_token() of the SYN
 *
 * Call under rcu_read_lock(); check what it found with ftv_join_take().
 * Return: the entry or NULL.
 */
struct ftv_join_entry *ftv_join_lookup(struct rhashtable *table, u64 token)
{
	return rhashtable_lookup(table, &token, join_params);
}

/* Move the token of @e, which was ahead, to the ring of used ones. */
static void take_slot(struct ftv_join_window *w, struct ftv_join_entry *e)
{
	struct ftv_join_entry *u = &w->used[w->used_pos];
	u32 index = e->index;

	w->used_pos = (w->used_pos + 1) % FTV_JOIN_USED;
	slot_remove(w, u);
	slot_remove(w, e);
	/* Not remembered if it fails: a replay of it is then refused as
	 * an unknown token instead of counted as a replay.
	 */
	slot_insert(w, u, index, true);
}

/**
 * ftv_join_check - what taking the token a SYN carries would find
 * @entry: what ftv_join_lookup() found
 * @token: the SYN's token
 *
 * Call with the lock of @entry's window held; nothing changes.
 *
 * Return: FTV_JOIN_OK if it is expected, FTV_JOIN_REPLAYED for a token
 * taken before, or FTV_JOIN_UNKNOWN if the slot has moved on since it was
 * found.
 */
enum ftv_join_result ftv_join_check(const struct ftv_join_entry *entry,
				    u64 token)
{
	const struct ftv_join_window *w = entry->window;

	lockdep_assert_held(w->lock);
	if (!w->live || !entry->hashed || entry->token != token)
		return FTV_JOIN_UNKNOWN;
	return entry->used ? FTV_JOIN_REPLAYED : FTV_JOIN_OK;
}

/**
 * ftv_join_take - take the token a SYN carries, if it is still expected
 * @entry: what ftv_join_lookup() found
 * @token: the SYN's token
 * @index: set to the join's number when it is taken
 *
 * Call with the lock of @entry's window held. Numbers below the one taken
 * are given up: the initiator never goes back.
 *
 * Return: as ftv_join_check(); the token is taken if FTV_JOIN_OK.
 */
enum ftv_join_result ftv_join_take(struct ftv_join_entry *entry, u64 token,
				   u32 *index)
{
	enum ftv_join_result found = ftv_join_check(entry, token);
	struct ftv_join_window *w = entry->window;
	unsigned int i;

	if (found != FTV_JOIN_OK)
		return found;
	*index = entry->index;
	take_slot(w, entry);
	w->next = *index + 1;
	for (i = 0; i < FTV_JOIN_AHEAD; i++)
		if (w->ahead[i].hashed && w->ahead[i].index < w->next)
			slot_remove(w, &w->ahead[i]);
	/* A slot that cannot be filled now is tried again at the next. */
	ahead_fill(w);
	return FTV_JOIN_OK;
}

#ifdef DEBUG
#include "selftest/join.c"
#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Joining another fake TCP connection to a session that has its keys,
 * without a new key exchange: the initiator's SYN carries a single-use
 * token made from the session's join key, and the responder keeps the
 * next few tokens of each session in one table per device. join.c says
 * how; docs/design-flows.md says why.
 */

#ifndef _FTV_JOIN_H
#define _FTV_JOIN_H

#include <linux/rhashtable-types.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/types.h>

enum ftv_join_limits {
	/* Tokens a window expects at once: joins an initiator may lose in
	 * a row (none of its SYNs answered) before the session can take no
	 * more. The initiator counts them and stops there, until the next
	 * session (ftv_session.joins_lost). A probe's joins to a blocked
	 * port and the flows' to a blocked address both lose some.
	 */
	FTV_JOIN_AHEAD = 16,
	/* Used tokens a window remembers, so that a replay is counted. */
	FTV_JOIN_USED = 16,
	/* Joins a responder's session takes at once, whatever the peer
	 * asks, so that a peer cannot pin unbounded state.
	 */
	FTV_JOINS_MAX = 16,
	/* Connections that can carry one session at once. */
	FTV_SESSION_FLOWS = FTV_JOINS_MAX + 1,
	/* Joins one peer opens a second, and at once past that: the
	 * initiator keeps to it, the responder takes twice the burst (the
	 * path may bunch SYNs up) and refuses the rest.
	 */
	FTV_JOIN_RATE = 50,
	FTV_JOIN_BURST = 16,
	/* Connections of one peer that are retired or linger at once; one
	 * more retires the oldest early (conn.c). More than the joins a
	 * peer may open in the FTV_RETIRED_KEYS_MS that a retired
	 * connection still opens what was on its way (15 s at
	 * FTV_JOIN_RATE), so that the one that goes has lingered already.
	 */
	FTV_PEER_RETIRED_MAX = 1024,
};

/* What ftv_join_take() found. */
enum ftv_join_result {
	FTV_JOIN_UNKNOWN,
	FTV_JOIN_OK,
	FTV_JOIN_REPLAYED,
};

struct ftv_join_window;

/**
 * struct ftv_join_entry - one token in the device's table
 * @node: entry in the table
 * @token: the SYN's ISN in the low 32 bits, its timestamp in the high
 * @index: the join's number in its session (the opening connection is 0)
 * @used: a join took it already: seen again, it is a replay
 * @hashed: it is in the table now
 * @window: the window it belongs to, for as long as the window exists
 *
 * Entries are slots of their window and are reused as it slides: a reader
 * who found one under RCU checks it again under the window's lock
 * (ftv_join_take()).
 */
struct ftv_join_entry {
	struct rhash_head node;
	u64 token;
	u32 index;
	bool used;
	bool hashed;
	struct ftv_join_window *window;
};

/**
 * struct ftv_join_window - the tokens one responder session expects
 * @key: the session's join key
 * @table: the device's table of tokens
 * @lock: the lock its owner holds to change it (lockdep checks it)
 * @next: the lowest index not yet taken or passed over
 * @used_pos: the slot of @used the next taken token goes to
 * @live: started and not yet stopped
 * @ahead: tokens of the indexes @next to @next + FTV_JOIN_AHEAD - 1, as
 *	far as they could be inserted
 * @used: the last tokens taken
 */
struct ftv_join_window {
	siphash_key_t key;
	struct rhashtable *table;
	spinlock_t *lock; /* the owner's, not the window's */
	u32 next;
	unsigned int used_pos;
	bool live;
	struct ftv_join_entry ahead[FTV_JOIN_AHEAD];
	struct ftv_join_entry used[FTV_JOIN_USED];
};

u64 ftv_join_token(const siphash_key_t *key, u32 index);
int ftv_join_table_init(struct rhashtable *table);
void ftv_join_table_uninit(struct rhashtable *table);
int ftv_join_window_start(struct ftv_join_window *w, struct rhashtable *table,
			  spinlock_t *lock, const siphash_key_t *key);
void ftv_join_window_stop(struct ftv_join_window *w);
struct ftv_join_entry *ftv_join_lookup(struct rhashtable *table, u64 token);
enum ftv_join_result ftv_join_check(const struct ftv_join_entry *entry,
				    u64 token);
enum ftv_join_result ftv_join_take(struct ftv_join_entry *entry, u64 token,
				   u32 *index);

static inline u64 ftv_join_syn_token(u32 isn, u32 tsval)
{
	return (u64)tsval << 32 | isn;
}

#ifdef DEBUG
bool ftv_join_selftest(void);
#endif

#endif /* _FTV_JOIN_H */

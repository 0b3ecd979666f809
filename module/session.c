// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: the keys one key exchange gave, their counters and replay
 * window, the queues that seal and open with them in order, FEC, and the
 * clocks that say when the keys must be renewed and when they may no
 * longer be used. The connection that carries a session (conn.c) decides
 * when it is set up and torn down; this file only says how.
 */

#include "session.h"
#include "log.h"
#include "crypto.h"
#include "flow.h"
#include "open.h"
#include "send.h"

#include <crypto/aead.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

/*
 * Session lifetime. The side that opened a connection opens a new one (new
 * ports, new handshake, new keys) once a session is this old or has sent
 * this many messages; nobody uses a session past the reject limits. Debug
 * builds let tests shorten them; reject must stay above rekey.
 */
#ifdef DEBUG
static unsigned int rekey_after_seconds = FTV_REKEY_AFTER_S;
module_param(rekey_after_seconds, uint, 0644);
MODULE_PARM_DESC(rekey_after_seconds, "Open a new session after this long");

static unsigned int reject_after_seconds = FTV_REJECT_AFTER_S;
module_param(reject_after_seconds, uint, 0644);
MODULE_PARM_DESC(reject_after_seconds, "Never use a session older than this");

static unsigned long long rekey_after_messages = FTV_REKEY_AFTER_MESSAGES;
module_param(rekey_after_messages, ullong, 0644);
MODULE_PARM_DESC(rekey_after_messages,
		 "Open a new session after sending this many messages");

static unsigned long long reject_after_messages = FTV_REJECT_AFTER_MESSAGES;
module_param(reject_after_messages, ullong, 0644);
MODULE_PARM_DESC(reject_after_messages,
		 "Never use a key for more messages than this");
#else
static const unsigned int rekey_after_seconds = FTV_REKEY_AFTER_S;
static const unsigned int reject_after_seconds = FTV_REJECT_AFTER_S;
static const u64 rekey_after_messages = FTV_REKEY_AFTER_MESSAGES;
static const u64 reject_after_messages = FTV_REJECT_AFTER_MESSAGES;
#endif

static void reorder_expired(struct timer_list *timer);

/**
 * ftv_session_create - a session that has no keys yet
 * @links: what it hangs off
 * @gfp: allocation flags
 *
 * Return: the session, or NULL.
 */
struct ftv_session *ftv_session_create(const struct ftv_session_links *links,
				       gfp_t gfp)
{
	struct ftv_session *s = kzalloc(sizeof(*s), gfp);

	if (!s)
		return NULL;
	s->dev = links->dev;
	kref_init(&s->refcount);
	ftv_replay_init(&s->replay);
	skb_queue_head_init(&s->early);
	INIT_LIST_HEAD(&s->live_joins);
	ftv_serial_init(&s->tx_queue, ftv_send_finish_job, &s->jobs,
			links->cpu);
	ftv_serial_init(&s->rx_queue, ftv_open_finish_job, &s->jobs, -1);
	s->cell = links->cell;
	spin_lock_init(&s->reorder_lock);
	timer_setup(&s->reorder_timer, reorder_expired, 0);
	timer_setup(&s->flow_timer, ftv_flow_check, 0);
	ftv_fec_conn_init(&s->fec, links->fec_stats, links->fec_setting,
			  links->fec_rx_count, links->dev, links->local_port,
			  links->remote_port);
	ftv_dev_dbg(s->dev, "session %u:%u created\n",
		    ntohs(links->local_port), ntohs(links->remote_port));
	return s;
}

/* Until no job holds @s (queue.c): they end without sleeping. */
static void wait_jobs(struct ftv_session *s)
{
	wait_var_event(&s->jobs, !atomic_read(&s->jobs));
}

/* The last carrier let go: free the session, its keys zeroed with it. */
static void session_release(struct kref *kref)
{
	struct ftv_session *s = container_of(kref, struct ftv_session,
					     refcount);

	wait_jobs(s);
	/* No job is left to arm it; it may arm itself, which this waits
	 * out.
	 */
	timer_delete_sync(&s->reorder_timer);
	timer_delete_sync(&s->flow_timer);
	if (s->reorder) {
		ftv_reorder_purge(s->reorder);
		kfree(s->reorder);
	}
	/* Stopped when its opening connection retired or was killed. */
	WARN_ON_ONCE(s->join.live);
	ftv_serial_uninit(&s->tx_queue);
	ftv_serial_uninit(&s->rx_queue);
	ftv_fec_conn_uninit(&s->fec);
	skb_queue_purge(&s->early);
	ftv_crypto_free(s->send_tfm);
	ftv_crypto_free(s->recv_tfm);
	ftv_dev_dbg(s->dev, "session destroyed\n");
	kfree_sensitive(s);
}

/**
 * ftv_session_get - one more carrier of @s
 * @s: a session the caller holds a reference on
 *
 * Return: @s.
 */
struct ftv_session *ftv_session_get(struct ftv_session *s)
{
	kref_get(&s->refcount);
	return s;
}

/**
 * ftv_session_put - a carrier lets go of @s
 * @s: the session, or NULL
 *
 * The last one frees it once no job holds it. May sleep.
 */
void ftv_session_put(struct ftv_session *s)
{
	might_sleep();
	if (s)
		kref_put(&s->refcount, session_release);
}

/**
 * ftv_session_prepare_keys - allocate the transforms ahead of the keys
 * @s: an initiator's session, before its initiation goes out
 *
 * The response is opened in softirq context, where allocating a transform
 * is not allowed; ftv_session_set_keys() then only sets the keys.
 *
 * Return: 0 or -ENOMEM.
 */
int ftv_session_prepare_keys(struct ftv_session *s)
{
	static const u8 no_key[FTV_KEY_SIZE];

	s->send_tfm = ftv_crypto_alloc(no_key);
	s->recv_tfm = ftv_crypto_alloc(no_key);
	if (IS_ERR(s->send_tfm) || IS_ERR(s->recv_tfm))
		return -ENOMEM;
	return 0;
}

/**
 * ftv_session_set_keys - key a session
 * @s: a session not yet in use
 * @keys: the keys; wiped on return
 *
 * A responder allocates its transforms here, in process context; an
 * initiator allocated them beforehand (ftv_session_prepare_keys()) and
 * only sets the keys, which is allowed in softirq context.
 *
 * Return: 0 or a negative errno.
 */
int ftv_session_set_keys(struct ftv_session *s, struct ftv_session_keys *keys)
{
	int ret = 0;

	if (!s->send_tfm) {
		s->send_tfm = ftv_crypto_alloc(keys->send);
		s->recv_tfm = ftv_crypto_alloc(keys->recv);
		if (IS_ERR(s->send_tfm) || IS_ERR(s->recv_tfm))
			ret = -ENOMEM;
	} else {
		ret = crypto_aead_setkey(s->send_tfm, keys->send,
					 FTV_KEY_SIZE) ?:
		      crypto_aead_setkey(s->recv_tfm, keys->recv,
					 FTV_KEY_SIZE);
	}
	s->send_hp = keys->send_hp;
	s->recv_hp = keys->recv_hp;
	s->join_key = keys->join;
	memzero_explicit(keys, sizeof(*keys));
	if (!ret) /* pairs with the acquire in ftv_session_keyed() */
		smp_store_release(&s->keyed, true);
	return ret;
}

/**
 * ftv_session_wipe_keys - forget the keys of a session nobody uses now
 * @s: a retired session: no job is queued for it any more, and those
 *	queued before are waited for
 *
 * May sleep.
 */
void ftv_session_wipe_keys(struct ftv_session *s)
{
	wait_jobs(s);
	ftv_fec_conn_retire(&s->fec);
	ftv_crypto_free(s->send_tfm);
	ftv_crypto_free(s->recv_tfm);
	s->send_tfm = NULL;
	s->recv_tfm = NULL;
	memzero_explicit(&s->send_hp, sizeof(s->send_hp));
	memzero_explicit(&s->recv_hp, sizeof(s->recv_hp));
	memzero_explicit(&s->join_key, sizeof(s->join_key));
}

/**
 * ftv_session_started - the keys are in use from now on
 * @s: the session
 */
void ftv_session_started(struct ftv_session *s)
{
	WRITE_ONCE(s->established, jiffies);
}

static unsigned long session_age(const struct ftv_session *s)
{
	return jiffies - READ_ONCE(s->established);
}

/**
 * ftv_session_rekey_due - whether the opener should start a new session
 * @s: a session in use
 * @counter: the next counter to be sent with it
 *
 * Return: true when the session is old enough or has sent enough.
 */
bool ftv_session_rekey_due(const struct ftv_session *s, u64 counter)
{
	return session_age(s) >= READ_ONCE(rekey_after_seconds) * HZ ||
	       counter >= READ_ONCE(rekey_after_messages);
}

/**
 * ftv_session_expired - whether a session's keys must no longer be used
 * @s: a session
 * @counter: the counter about to be sent or just received
 *
 * Return: true past the reject limits.
 */
bool ftv_session_expired(const struct ftv_session *s, u64 counter)
{
	return session_age(s) >= READ_ONCE(reject_after_seconds) * HZ ||
	       counter >= min_t(u64, READ_ONCE(reject_after_messages),
				FTV_REJECT_AFTER_MESSAGES);
}

/*
 * The ring a session's received messages go through once a join of it is
 * up: from then on they can overtake one another. Allocated in the serial
 * step, which is one CPU at a time; without memory, packets go on in the
 * order they come.
 */
static struct ftv_reorder *reorder_start(struct ftv_session *s, u64 counter)
{
	struct ftv_reorder *r = kmalloc(sizeof(*r), GFP_ATOMIC);

	if (!r)
		return NULL;
	ftv_reorder_init(r, counter);
	spin_lock(&s->reorder_lock);
	s->reorder = r;
	spin_unlock(&s->reorder_lock);
	return r;
}

/**
 * ftv_session_deliver - a message of the session was accepted
 * @s: the session
 * @counter: its counter, past the replay check
 * @skb: its inner packet, ready for the stack, or NULL for a message
 *	that carries none
 * @deliver: gets the packets to deliver now, in order
 *
 * Called in the serial step of the session's receive queue, with bottom
 * halves off. With one connection the packet goes straight on; once a
 * join is up, in counter order (reorder.c).
 */
void ftv_session_deliver(struct ftv_session *s, u64 counter,
			 struct sk_buff *skb, struct sk_buff_head *deliver)
{
	struct ftv_reorder *r = s->reorder;

	if (!r && READ_ONCE(s->joins_up))
		r = reorder_start(s, counter);
	if (!r) {
		if (skb)
			__skb_queue_tail(deliver, skb);
		return;
	}
	spin_lock(&s->reorder_lock);
	ftv_reorder_add(r, counter, skb, deliver);
	spin_unlock(&s->reorder_lock);
}

/* Arm the timer for the gap the ring waits at, unless it is armed. */
static void reorder_wait_locked(struct ftv_session *s)
{
	lockdep_assert_held(&s->reorder_lock);
	if (!ftv_reorder_waiting(s->reorder) ||
	    timer_pending(&s->reorder_timer))
		return;
	s->reorder_gap = s->reorder->next;
	mod_timer(&s->reorder_timer,
		  jiffies + msecs_to_jiffies(FTV_REORDER_HOLD_MS));
}

/**
 * ftv_session_deliver_done - a receive job's messages were all delivered
 * @s: the session
 *
 * A gap the ring now waits at is given up FTV_REORDER_HOLD_MS later.
 */
void ftv_session_deliver_done(struct ftv_session *s)
{
	if (!s->reorder)
		return;
	spin_lock(&s->reorder_lock);
	reorder_wait_locked(s);
	spin_unlock(&s->reorder_lock);
}

/* A gap waited long enough: what is held goes, unless it filled. */
static void reorder_expired(struct timer_list *timer)
{
	struct ftv_session *s = timer_container_of(s, timer, reorder_timer);
	struct sk_buff_head out;
	unsigned int dropped;

	__skb_queue_head_init(&out);
	spin_lock_bh(&s->reorder_lock);
	if (s->reorder->next == s->reorder_gap)
		ftv_reorder_flush(s->reorder, &out);
	reorder_wait_locked(s);
	spin_unlock_bh(&s->reorder_lock);
	dropped = ftv_cell_deliver(s->cell, &out);
	if (dropped)
		DEV_STATS_ADD(s->dev, rx_dropped, dropped);
}


/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parallel crypto in order: a connection's sealing and opening run on
 * every online CPU, and what comes out leaves (or is delivered) in the
 * order it went in. queue.c says how.
 */

#ifndef _FTV_QUEUE_H
#define _FTV_QUEUE_H

#include <linux/atomic.h>
#include <linux/netdevice.h>
#include <linux/ptr_ring.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

struct ftv_conn;

enum ftv_queue_limits {
	/* Jobs waiting for a CPU, per device and direction. */
	FTV_QUEUE_RING_JOBS = 2048,
	/* Segments in one connection's queue, per direction: about 4 MB
	 * of 1400-byte messages. More is dropped and counted.
	 */
	FTV_QUEUE_MAX_SEGS = 3072,
	/* Jobs in one connection's queue, per direction: half of the ring
	 * at most, so that one connection (a flood of single segments on
	 * one tuple, say) cannot take all of the device's ring from the
	 * other peers.
	 */
	FTV_QUEUE_MAX_JOBS = FTV_QUEUE_RING_JOBS / 2,
	/* The longest lone packet that ftv_queue_where() takes for a small
	 * one: an ACK, a game's or a call's packet, a datagram of a flood.
	 */
	FTV_QUEUE_SMALL_LEN = 512,
};

/* Where a job is: waiting for its crypto, done, or failed. */
enum ftv_job_state {
	FTV_JOB_QUEUED,
	FTV_JOB_DONE,
	FTV_JOB_DEAD,
};

/**
 * enum ftv_queued - what ftv_serial_add() did with a job
 * @FTV_QUEUE_FULL: nothing: the queue is full
 * @FTV_QUEUED: queued behind other jobs
 * @FTV_QUEUED_FIRST: queued first, nothing ahead of it
 * @FTV_QUEUED_QUIET: queued first, and no job came for a tick before it
 */
enum ftv_queued {
	FTV_QUEUE_FULL,
	FTV_QUEUED,
	FTV_QUEUED_FIRST,
	FTV_QUEUED_QUIET,
};

/**
 * enum ftv_crypt_where - who does a job's crypto (ftv_queue_where())
 * @FTV_CRYPT_INLINE: the producer, at once
 * @FTV_CRYPT_ANY: the worker of the next CPU in turn
 * @FTV_CRYPT_ELSEWHERE: the worker of the next CPU other than the
 *	producer's
 * @FTV_CRYPT_THERE: the worker of the CPU that hands the job's serial
 *	queue on
 */
enum ftv_crypt_where {
	FTV_CRYPT_INLINE,
	FTV_CRYPT_ANY,
	FTV_CRYPT_ELSEWHERE,
	FTV_CRYPT_THERE,
};

/* What a received message turned out to be, for the serial step. */
enum ftv_open_result {
	FTV_OPEN_OK,
	FTV_OPEN_MALFORMED,
	FTV_OPEN_NO_SESSION,
	FTV_OPEN_BAD_AUTH,
};

/**
 * struct ftv_cb - ftv's use of skb->cb while a packet is queued
 * @conn: job head only: the connection, held by its count of jobs (the
 *	producer's hold)
 * @more: job head only: the job's other segments, linked by ->next
 *	(the head itself is linked into its serial queue). For a transmit
 *	job that was a GSO superpacket: all the sealed segments, the head
 *	being only the original
 * @state: job head only: enum ftv_job_state
 * @segs: job head only: segments the job carries (a transmit job: on
 *	the wire, FEC's repair messages included; as many nonces are
 *	reserved)
 * @fec_k: transmit job head: K of its FEC groups, 0 for none (fec.c)
 * @fec_m: transmit job head: M of its FEC groups
 * @tx: what a transmit job carries (head only)
 * @tx.counter: the first of its nonces
 * @tx.bytes: inner bytes, for the statistics (0 for a keepalive)
 * @tx.shape: a lone message, a join's opening: shape it once sealed
 *	(past SKB_GSO_CB_OFFSET: only read for a head that is not GSO)
 * @rx: what each received segment carries
 * @rx.seq: its sequence number
 * @rx.ack: its acknowledgment number
 * @rx.tsval: its timestamp value
 * @rx.tsecr: its timestamp echo reply
 * @rx.payload_off: offset of its payload from skb->data
 * @rx.payload_len: payload length
 * @rx.flags: its TCPHDR_* flags
 * @rx.has_ts: @rx.tsval is valid
 * @rx.result: enum ftv_open_result, set by the worker
 * @rx.shaped: it came shaped (a join's opening) and was read back in
 *	place: @rx.payload_len is the message's length, the segment's is
 *	FTV_SHAPED_LEN() of it
 */
struct ftv_cb {
	struct ftv_conn *conn;
	struct sk_buff *more;
	atomic_t state;
	u16 segs;
	u8 fec_k;
	u8 fec_m;
	union {
		struct {
			u64 counter;
			u32 bytes;
			bool shape;
		} tx;
		struct {
			u32 seq;
			u32 ack;
			u32 tsval;
			u32 tsecr;
			u16 payload_off;
			u16 payload_len;
			u8 flags;
			bool has_ts;
			u8 result;
			bool shaped;
		} rx;
	};
};

#define FTV_CB(skb) ((struct ftv_cb *)(skb)->cb)

/**
 * struct ftv_serial - one connection's jobs in one direction, in order
 * @jobs: job heads, oldest first; its lock guards it, @segs and
 *	@added_at
 * @segs: segments of the jobs in @jobs
 * @added_at: jiffies when the last job was added
 * @drain_lock: held by whoever hands done jobs on; others leave it to
 *	them (serial_drain() in queue.c)
 * @finish: hands one job on (sends it, or delivers its packets) and
 *	releases its hold (ftv_job_release())
 * @holds: the count of holds on the queue's owner (a session), which
 *	waits for it to reach zero before it is freed (session.c)
 * @cpu: the CPU that hands the jobs on, or -1 for any
 * @work: runs the hand-over on @cpu
 */
struct ftv_serial {
	struct sk_buff_head jobs;
	unsigned int segs;
	unsigned long added_at;
	spinlock_t drain_lock; /* one CPU hands the jobs on, in order */
	void (*finish)(struct sk_buff *head);
	atomic_t *holds;
	int cpu;
	struct work_struct work;
};

/**
 * struct ftv_crypt_queue - a device's jobs for one direction, any CPU's
 * @ring: job heads waiting for a worker
 * @workers: one work item per possible CPU, all draining @ring
 * @crypt: does a job's crypto (seals or opens it); returns its new state
 * @serial_of: the serial queue a job is in
 * @last_cpu: the CPU the last job was handed to (round robin)
 */
struct ftv_crypt_queue {
	struct ptr_ring ring;
	struct ftv_crypt_worker __percpu *workers;
	enum ftv_job_state (*crypt)(struct sk_buff *head);
	struct ftv_serial *(*serial_of)(struct sk_buff *head);
	int last_cpu;
};

/**
 * struct ftv_crypt_worker - a CPU's worker for a crypt queue
 * @work: runs the direction's worker function on that CPU
 * @queue: the queue it drains
 */
struct ftv_crypt_worker {
	struct work_struct work;
	struct ftv_crypt_queue *queue;
};

int ftv_queue_init(void);
void ftv_queue_uninit(void);
enum ftv_crypt_where ftv_queue_where(const struct ftv_serial *serial,
				     enum ftv_queued queued,
				     unsigned int segs, unsigned int len,
				     bool receiving);

void ftv_serial_init(struct ftv_serial *serial,
		     void (*finish)(struct sk_buff *head), atomic_t *holds,
		     int cpu);
void ftv_serial_uninit(struct ftv_serial *serial);
enum ftv_queued ftv_serial_add(struct ftv_serial *serial,
			       struct sk_buff *head, struct ftv_conn *conn,
			       unsigned int segs, atomic64_t *next_counter);
void ftv_serial_hand_on(struct ftv_serial *serial);

int ftv_crypt_queue_init(struct ftv_crypt_queue *queue,
			 enum ftv_job_state (*crypt)(struct sk_buff *head),
			 struct ftv_serial *(*serial_of)(struct sk_buff *head));
void ftv_crypt_queue_uninit(struct ftv_crypt_queue *queue);
bool ftv_crypt_queue_submit(struct ftv_crypt_queue *queue,
			    const struct ftv_serial *serial,
			    struct sk_buff *head, enum ftv_crypt_where where);

/* The next segment of the job @head after @skb, or NULL. */
static inline struct sk_buff *ftv_job_next(struct sk_buff *head,
					   struct sk_buff *skb)
{
	return skb == head ? FTV_CB(head)->more : skb->next;
}

/* Mark a job done (or failed) for its serial step. */
static inline void ftv_job_done(struct sk_buff *head, enum ftv_job_state state)
{
	/* Pairs with the acquire in serial_pop_done() (queue.c). */
	atomic_set_release(&FTV_CB(head)->state, state);
}

/*
 * A hold on what a job needs: the job's own on its queue's owner, from
 * ftv_serial_add() to its hand-on, a worker's while it marks a job done
 * and drains, and the producer's on the job's connection. What is held is
 * freed once its count is zero; the waiter frees it as soon as it sees
 * zero, so the wake-up goes through the address alone.
 */
static inline void ftv_job_hold(atomic_t *holds)
{
	atomic_inc(holds);
}

static inline void ftv_job_release(atomic_t *holds)
{
	if (atomic_dec_and_test(holds))
		wake_up_var(holds);
}

#endif /* _FTV_QUEUE_H */

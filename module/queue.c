// SPDX-License-Identifier: GPL-2.0
/*
 * Parallel crypto in order. One connection's packets are sealed (and
 * opened) on every online CPU, yet leave (and are delivered) in the order
 * they came:
 *
 *  1. The producer (the transmit path, or the receive hook) makes a job of
 *     what it has (an inner GSO superpacket, or an outer one, or a single
 *     packet), puts it at the tail of the connection's serial queue for
 *     that direction, reserving its nonces there so that nonces follow the
 *     queue's order, and then into the device's crypt ring.
 *  2. A worker on the next CPU in turn takes the job from the ring, does
 *     the crypto, and marks the job done (or dead).
 *  3. Whoever marks a job done then hands on, in order, every done job at
 *     the head of the serial queue: sends it, or delivers its packets to
 *     the connection's NAPI cell. One CPU does that at a time; the others
 *     leave their jobs to it. Sending is always done on one CPU per
 *     connection (the others queue a work item there): segments sent on
 *     several CPUs land in several CPUs' receive backlogs on a veth, or
 *     transmit queues on a NIC, and can overtake each other there.
 *
 * With one CPU online nothing is gained by a worker, nor for a lone packet
 * on an idle connection: the producer does the crypto itself and hands the
 * job on at once, through the same queue. A lone received packet on a busy
 * connection goes to a worker on another CPU than the one it arrived on
 * (ftv_queue_where()).
 *
 * Lifetimes: a job holds the owner of its serial queue (a session,
 * session.c) through the count the queue was given (ftv_job_hold()), from
 * ftv_serial_add() until the job is handed on; a worker holds one more
 * while it marks a job done and drains, since the job can be handed on
 * and its hold released by another CPU meanwhile. The owner is freed
 * only once the count is zero. The job's connection is held by the
 * producer, for as long (send.c, open.c). This file knows nothing else of
 * connections: the
 * direction's owner (send.c, open.c) gives it the crypto step, the
 * hand-on step and the way from a job to its serial queue.
 */

#include "queue.h"

#include <linux/cpumask.h>
#include <linux/percpu.h>

static struct workqueue_struct *crypt_wq;

static void serial_work(struct work_struct *work);

/**
 * ftv_serial_init - an empty serial queue
 * @serial: the queue
 * @finish: hands one job on and releases its hold on the queue's owner
 *	(ftv_job_release(@holds)); called with bottom halves off
 * @holds: the count of holds of the queue's owner
 * @cpu: the CPU that hands the jobs on, or -1 for whichever finishes one
 */
void ftv_serial_init(struct ftv_serial *serial,
		     void (*finish)(struct sk_buff *head), atomic_t *holds,
		     int cpu)
{
	skb_queue_head_init(&serial->jobs);
	spin_lock_init(&serial->drain_lock);
	serial->segs = 0;
	serial->added_at = jiffies - 2;
	serial->finish = finish;
	serial->holds = holds;
	serial->cpu = cpu;
	INIT_WORK(&serial->work, serial_work);
}

/**
 * ftv_serial_uninit - wait for its work, free what it still holds
 * @serial: a queue nobody adds to any more, with no job left
 *
 * May sleep.
 */
void ftv_serial_uninit(struct ftv_serial *serial)
{
	cancel_work_sync(&serial->work);
	WARN_ON_ONCE(!skb_queue_empty(&serial->jobs));
	skb_queue_purge(&serial->jobs);
}

/**
 * ftv_serial_add - put a job at the tail of a connection's queue
 * @serial: the queue, one of @conn's
 * @head: the job's head skb
 * @conn: its connection, which the caller holds for the job
 * @segs: segments the job carries (on the wire, for a transmit job: FEC's
 *	repair messages included); its queue holds at most
 *	FTV_QUEUE_MAX_SEGS of them, in at most FTV_QUEUE_MAX_JOBS jobs
 * @next_counter: for a transmit job, the connection's next nonce: @segs
 *	of them are taken from it, in the queue's order, and the first
 *	goes to the job's tx.counter; NULL for a receive job
 *
 * Return: FTV_QUEUED_FIRST if the job is the only one in the queue,
 * FTV_QUEUED if others are ahead of it, or FTV_QUEUE_FULL: the job is
 * then not queued.
 */
enum ftv_queued ftv_serial_add(struct ftv_serial *serial,
			       struct sk_buff *head, struct ftv_conn *conn,
			       unsigned int segs, atomic64_t *next_counter)
{
	enum ftv_queued queued;

	struct ftv_cb *cb = FTV_CB(head);

	BUILD_BUG_ON(sizeof(struct ftv_cb) > sizeof_field(struct sk_buff, cb));
	/* Splitting a GSO head writes its cb from SKB_GSO_CB_OFFSET on: what
	 * the job needs afterwards must come before.
	 */
	BUILD_BUG_ON(offsetofend(struct ftv_cb, tx.counter) >
		     SKB_GSO_CB_OFFSET);
	cb->conn = conn;
	cb->segs = segs;
	atomic_set(&cb->state, FTV_JOB_QUEUED);
	spin_lock_bh(&serial->jobs.lock);
	if (unlikely(serial->segs + segs > FTV_QUEUE_MAX_SEGS ||
		     skb_queue_len(&serial->jobs) >= FTV_QUEUE_MAX_JOBS)) {
		spin_unlock_bh(&serial->jobs.lock);
		return FTV_QUEUE_FULL;
	}
	if (!skb_queue_empty(&serial->jobs))
		queued = FTV_QUEUED;
	else if (time_after(jiffies, serial->added_at + 1))
		queued = FTV_QUEUED_QUIET;
	else
		queued = FTV_QUEUED_FIRST;
	serial->added_at = jiffies;
	serial->segs += segs;
	if (next_counter)
		cb->tx.counter = atomic64_fetch_add(segs, next_counter);
	ftv_job_hold(serial->holds);
	__skb_queue_tail(&serial->jobs, head);
	spin_unlock_bh(&serial->jobs.lock);
	return queued;
}

/**
 * ftv_queue_where - who does a job's crypto
 * @serial: the queue the job is in
 * @queued: what ftv_serial_add() said
 * @segs: the job's segments
 * @len: its length in bytes (of a lone packet, the packet's)
 * @receiving: a receive job (the producer is the receive hook)
 *
 * With one CPU online a worker gains nothing. Nor does it for a lone
 * packet with nothing ahead of it (a ping, an ACK on a quiet connection,
 * a full-sized segment of a stream whose cable neither cuts nor merges
 * superpackets): handing it over would only add the wake-up of a worker
 * to its latency. A small lone packet received on a busy connection (a
 * flood of small packets, the ACKs of an upload) arrived in the softirq
 * of a CPU that also ran the stack below it, and on a veth the sender's
 * too: it is opened, and its packet delivered, on another CPU, which
 * splits each packet's work over two (64-byte packets went from 1.0 to
 * 1.4 of WireGuard's rate). A small lone packet to send, with nothing
 * ahead of it, is sealed by the worker of the CPU its connection sends
 * from, if that is another: that CPU is woken for it anyway. Larger lone
 * packets are not moved so: that would send every segment of a stream
 * whose cable cuts no superpackets to the one other CPU, one job each
 * (docs/performance.md: two thirds of its rate lost).
 * Everything else goes to the next worker in turn.
 *
 * Return: where.
 */
enum ftv_crypt_where ftv_queue_where(const struct ftv_serial *serial,
				     enum ftv_queued queued,
				     unsigned int segs, unsigned int len,
				     bool receiving)
{
	int cpu;

	if (num_online_cpus() == 1)
		return FTV_CRYPT_INLINE;
	if (segs > 1)
		return FTV_CRYPT_ANY;
	if (len > FTV_QUEUE_SMALL_LEN)
		return queued == FTV_QUEUED ? FTV_CRYPT_ANY : FTV_CRYPT_INLINE;
	if (receiving)
		return queued == FTV_QUEUED_QUIET ? FTV_CRYPT_INLINE :
		       FTV_CRYPT_ELSEWHERE;
	if (queued == FTV_QUEUED)
		return FTV_CRYPT_ANY;
	cpu = READ_ONCE(serial->cpu);
	return cpu < 0 || cpu == raw_smp_processor_id() || !cpu_online(cpu) ?
	       FTV_CRYPT_INLINE : FTV_CRYPT_THERE;
}

/* The head job if it is no longer waiting for its crypto. */
static struct sk_buff *serial_pop_done(struct ftv_serial *serial)
{
	struct sk_buff *head;

	spin_lock_bh(&serial->jobs.lock);
	head = skb_peek(&serial->jobs);
	/* Pairs with the release in ftv_job_done(). */
	if (head && atomic_read_acquire(&FTV_CB(head)->state) !=
		    FTV_JOB_QUEUED) {
		__skb_unlink(head, &serial->jobs);
		serial->segs -= FTV_CB(head)->segs;
	} else {
		head = NULL;
	}
	spin_unlock_bh(&serial->jobs.lock);
	return head;
}

static bool serial_head_done(struct ftv_serial *serial)
{
	struct sk_buff *head;
	bool done;

	spin_lock_bh(&serial->jobs.lock);
	head = skb_peek(&serial->jobs);
	done = head && atomic_read_acquire(&FTV_CB(head)->state) !=
		       FTV_JOB_QUEUED;
	spin_unlock_bh(&serial->jobs.lock);
	return done;
}

/*
 * Hand on the done jobs at the head of @serial, in order. If another CPU
 * is draining already, it also hands on the job this one just finished:
 * it looks at the head once more after it lets go.
 */
static void serial_drain(struct ftv_serial *serial)
{
	struct sk_buff *head;

	do {
		if (!spin_trylock_bh(&serial->drain_lock))
			return;
		while ((head = serial_pop_done(serial)) != NULL)
			serial->finish(head);
		spin_unlock_bh(&serial->drain_lock);
		/* A job marked done while we held the lock, by a CPU that
		 * then found it held, is ours to hand on: look again. The
		 * barrier orders our unlock before that look, as theirs
		 * orders marking the job before trying the lock.
		 */
		smp_mb();
	} while (serial_head_done(serial));
}

/* The queue's connection waits for this work before it goes. */
static void serial_work(struct work_struct *work)
{
	serial_drain(container_of(work, struct ftv_serial, work));
}

/**
 * ftv_serial_hand_on - hand on what is done at the head of a queue
 * @serial: the queue, after one of its jobs was marked done
 *
 * Here, or on the queue's CPU if it has one and this is another. The
 * caller keeps the queue's connection alive for the call.
 */
void ftv_serial_hand_on(struct ftv_serial *serial)
{
	int cpu = READ_ONCE(serial->cpu);

	if (cpu < 0 || cpu == raw_smp_processor_id() || !cpu_online(cpu))
		serial_drain(serial);
	else
		queue_work_on(cpu, crypt_wq, &serial->work);
}

/* The next job for a worker, or NULL when the ring is empty. */
static struct sk_buff *crypt_queue_next(struct ftv_crypt_queue *queue)
{
	if (need_resched())
		cond_resched();
	return ptr_ring_consume_bh(&queue->ring);
}

/*
 * A CPU's worker: does the crypto of the jobs in the ring, marks each
 * done, and hands on those that are next in their connection's order.
 */
static void crypt_worker(struct work_struct *work)
{
	struct ftv_crypt_queue *queue = container_of(work,
						     struct ftv_crypt_worker,
						     work)->queue;
	struct ftv_serial *serial;
	struct sk_buff *head;

	while ((head = crypt_queue_next(queue)) != NULL) {
		serial = queue->serial_of(head);
		/* Once it is marked, another CPU may hand the job on and
		 * release its hold on the connection.
		 */
		ftv_job_hold(serial->holds);
		ftv_job_done(head, queue->crypt(head));
		ftv_serial_hand_on(serial);
		ftv_job_release(serial->holds);
	}
}

/**
 * ftv_crypt_queue_init - a device's ring and a worker per possible CPU
 * @queue: the queue
 * @crypt: the direction's crypto step for one job, run by the workers
 *	(and by producers that do a job inline); returns FTV_JOB_DONE or
 *	FTV_JOB_DEAD
 * @serial_of: the serial queue of a job in the ring
 *
 * Return: 0 or -ENOMEM.
 */
int ftv_crypt_queue_init(struct ftv_crypt_queue *queue,
			 enum ftv_job_state (*crypt)(struct sk_buff *head),
			 struct ftv_serial *(*serial_of)(struct sk_buff *head))
{
	int cpu, ret;

	ret = ptr_ring_init(&queue->ring, FTV_QUEUE_RING_JOBS, GFP_KERNEL);
	if (ret)
		return ret;
	queue->workers = alloc_percpu(struct ftv_crypt_worker);
	if (!queue->workers) {
		ptr_ring_cleanup(&queue->ring, NULL);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		struct ftv_crypt_worker *worker = per_cpu_ptr(queue->workers,
							      cpu);

		INIT_WORK(&worker->work, crypt_worker);
		worker->queue = queue;
	}
	queue->crypt = crypt;
	queue->serial_of = serial_of;
	queue->last_cpu = -1;
	return 0;
}

/**
 * ftv_crypt_queue_uninit - stop the workers and free the ring
 * @queue: a queue no job can be submitted to any more, and that holds
 *	none (every connection of the device is gone)
 */
void ftv_crypt_queue_uninit(struct ftv_crypt_queue *queue)
{
	int cpu;

	for_each_possible_cpu(cpu)
		flush_work(&per_cpu_ptr(queue->workers, cpu)->work);
	free_percpu(queue->workers);
	WARN_ON_ONCE(!__ptr_ring_empty(&queue->ring));
	ptr_ring_cleanup(&queue->ring, NULL);
}

/* The next online CPU after the last one given work, round robin, other
 * than @not unless it is the only one. A race between two producers can
 * pick one CPU twice; that costs nothing.
 */
static int next_cpu(struct ftv_crypt_queue *queue, int not)
{
	int cpu = READ_ONCE(queue->last_cpu), tries = 2;

	do {
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
	} while (cpu == not && --tries);
	WRITE_ONCE(queue->last_cpu, cpu);
	return cpu;
}

/**
 * ftv_crypt_queue_submit - hand a queued job to a worker
 * @queue: the device's queue for the job's direction
 * @serial: the serial queue it is in
 * @head: a job already in @serial
 * @where: what ftv_queue_where() said, not FTV_CRYPT_INLINE
 *
 * Return: false if the ring is full; the caller then marks the job dead.
 */
bool ftv_crypt_queue_submit(struct ftv_crypt_queue *queue,
			    const struct ftv_serial *serial,
			    struct sk_buff *head, enum ftv_crypt_where where)
{
	/* Read while the job still holds @serial's owner: once in the ring,
	 * another CPU's worker can finish it and hand it on.
	 */
	int cpu = where == FTV_CRYPT_THERE ? READ_ONCE(serial->cpu) : -1;

	if (unlikely(ptr_ring_produce_bh(&queue->ring, head)))
		return false;
	if (cpu < 0 || !cpu_online(cpu))
		cpu = next_cpu(queue, where == FTV_CRYPT_ELSEWHERE ?
				      raw_smp_processor_id() : -1);
	queue_work_on(cpu, crypt_wq, &per_cpu_ptr(queue->workers, cpu)->work);
	return true;
}

/**
 * ftv_queue_init - the workqueue the crypt workers run on
 *
 * Return: 0 or -ENOMEM.
 */
int __init ftv_queue_init(void)
{
	crypt_wq = alloc_workqueue("ftv-crypt", FTV_WQ_PERCPU |
				   WQ_CPU_INTENSIVE | WQ_MEM_RECLAIM, 0);
	return crypt_wq ? 0 : -ENOMEM;
}

/**
 * ftv_queue_uninit - destroy it
 */
void ftv_queue_uninit(void)
{
	destroy_workqueue(crypt_wq);
}

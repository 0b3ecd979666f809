// SPDX-License-Identifier: GPL-2.0
/*
 * probe: what the path does to a peer, in at most 30 s and under 5 MB.
 * The module sends one step at a time (an echo, a pad, a stop) and keeps
 * the peer's last answer; this runs the steps, times them and counts what
 * came on each connection, and probe-judge.c judges the numbers:
 *
 *  1. answer: an echo on the session's first connection, twice at most;
 *  2. connections: an echo on each other one (not with --quick);
 *  3. path MTU: an echo as long as the device's MTU and, when it is lost
 *     twice, a binary search for the longest that comes, then the outer
 *     route's MTU, which only an ICMP error lowers (not with --quick);
 *  4. freeze: 500 kB of padding at 8 Mbit/s on another connection,
 *     watched every 50 ms, and on the next (three at most) while the
 *     last stopped bringing it: what each had carried towards this end
 *     when it stopped (not with --quick);
 *  5. resets: this end's rst and fin counts and evidence, and the peer's
 *     evidence from its answers;
 *  6. policing: 1 MB of padding at 8 Mbit/s on one connection and, when
 *     it came short, as long a pad at half that rate on each of them
 *     (not after a freeze: the first connection would freeze too);
 *  7. loss: what the pad lacked, and what FEC's counters say;
 *  8. reach: joins from two fresh source ports to the endpoint the
 *     session rides, and one to each other endpoint of the peer's list,
 *     each up within 2.5 s or not (the module gives each up once it is:
 *     they carry nothing).
 *
 * The peer serves one peer 200 answers and 5 MiB of padding a minute, so
 * a run asks for what it needs and no more: one pad on a clean path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "encoding.h"
#include "ipc.h"
#include "parse.h"
#include "probe-judge.h"
#include "settings.h"
#include "subcommands.h"
#include "util.h"

/* An echo's answer that takes longer is none. */
#define ECHO_WAIT 1.0
/*
 * How often the probe is read while an answer is awaited: a quarter of
 * the time waited so far, so that a round trip is timed within a quarter,
 * and at least every 50 ms.
 */
#define POLL_MIN 0.001
#define POLL_MAX 0.05
/* The plaintext of an ask (protocol.md, section 2: 0x06, step, two zero
 * bytes and four le32), for the run's byte count.
 */
#define ASK_LEN 20

struct run {
	char ifname[IFNAMSIZ];
	uint8_t key[FTV_KEY_LEN];
	bool json, quick, apply;
	double start, deadline;
	uint64_t ask_bytes;	/* what the asks sent carried */
	bool padding;		/* a pad may still be running at the peer */
	uint32_t base;		/* the connection asked on */
	struct probe_reply first;	/* the connections when it began */
	struct probe_tell last_tell;	/* the latest answer */
	bool told;
	struct probe_report r;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_seconds(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int probe_read(struct run *run, struct probe_reply *rep)
{
	static const struct probe_step read_step = { .step = FTV_PROBE_READ };

	return ipc_probe(run->ifname, run->key, &read_step, rep);
}

/* Sends @step, counting what the ask carries; its nonce is in @rep. */
static int send_step(struct run *run, const struct probe_step *step,
		     struct probe_reply *rep)
{
	int ret = ipc_probe(run->ifname, run->key, step, rep);

	if (!ret)
		run->ask_bytes += (step->length > ASK_LEN ? step->length :
				   ASK_LEN) + PROBE_MSG_OVERHEAD;
	return ret;
}

/*
 * Sends @step, then reads the probe until the peer's answer to it came or
 * @wait seconds passed (or the run's time). Returns 1 with the answer in
 * @rep->tell, 0 without one, or a negative errno (which the netlink layer
 * told).
 */
static int ask(struct run *run, const struct probe_step *step, double wait,
	       struct probe_reply *rep)
{
	double t0 = now(), until = t0 + wait;
	uint32_t nonce;
	int ret;

	if (until > run->deadline)
		until = run->deadline;
	ret = send_step(run, step, rep);
	if (ret)
		return ret;
	nonce = rep->nonce;
	while (!rep->told || rep->tell.nonce != nonce) {
		if (now() >= until)
			return 0;
		sleep_seconds(clamp((now() - t0) / 4, POLL_MIN, POLL_MAX));
		ret = probe_read(run, rep);
		if (ret)
			return ret;
	}
	run->last_tell = rep->tell;
	run->told = true;
	return 1;
}

static int echo(struct run *run, uint32_t index, double wait,
		struct probe_reply *rep)
{
	const struct probe_step step = { .step = FTV_PROBE_ECHO, .index = index };

	return ask(run, &step, wait, rep);
}

/* Ends what is left of a pad at the peer; its answer is not awaited. */
static void stop_padding(struct run *run)
{
	const struct probe_step step = { .step = FTV_PROBE_STOP,
					 .index = run->base };
	struct probe_reply rep;

	if (!run->padding)
		return;
	run->padding = false;
	send_step(run, &step, &rep);
}

static const struct probe_conn *find_conn(const struct probe_reply *rep,
					  uint32_t index)
{
	unsigned int i;

	for (i = 0; i < rep->n_conns; i++)
		if (rep->conns[i].index == index)
			return &rep->conns[i];
	return NULL;
}

/* What came on @conn since @before; all it has, if it came up since. */
static uint64_t conn_came(const struct probe_reply *before,
			  const struct probe_conn *conn)
{
	const struct probe_conn *was = find_conn(before, conn->index);

	if (was && was->rx_bytes <= conn->rx_bytes)
		return conn->rx_bytes - was->rx_bytes;
	return conn->rx_bytes;
}

static uint64_t came_since(const struct probe_reply *before,
			   const struct probe_reply *after)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < after->n_conns; i++)
		sum += conn_came(before, &after->conns[i]);
	return sum;
}

/* ---- the steps ---------------------------------------------------------- */

/* This end's view of the peer: its settings, counters and evidence. */
static int read_peer(struct run *run, struct device **devs,
		     struct peer **peer)
{
	struct peer *p;
	char key[KEY_B64_LEN + 1];

	*peer = NULL;
	if (ipc_get_devices(devs, run->ifname))
		return -1;
	for (p = (*devs)->first_peer; p; p = p->next)
		if (!memcmp(p->public_key, run->key, FTV_KEY_LEN))
			break;
	if (!p) {
		key_to_base64(key, run->key);
		print_error("%s has no peer %s", run->ifname, key);
		devices_free(*devs);
		return -1;
	}
	*peer = p;
	return 0;
}

static void take_settings(struct run *run, const struct device *dev,
			  const struct peer *peer)
{
	struct probe_report *r = &run->r;

	r->flows = peer_number(peer, FTV_PEER_A_FLOWS);
	r->fec = peer_fec(peer);
	r->rotate = peer_number(peer, FTV_PEER_A_ROTATE);
	/* A peer with an empty list only answers; a module without lists
	 * is taken to dial.
	 */
	r->dials = !(peer->flags & PEER_HAS_ENDPOINTS) || peer->endpoints;
	/* An echo's outer packet: its counter and tag, the TCP header with
	 * timestamps, the IP header.
	 */
	r->outer_overhead = PROBE_MSG_OVERHEAD + 32 +
			    (peer->endpoint.addr.sa_family == AF_INET6 ? 40 : 20);
	r->endpoint = peer->endpoint;
	if (peer->endpoints)
		r->endpoints = *peer->endpoints;
	r->shape_known = dev->flags & DEVICE_HAS_SHAPE;
	r->shape = dev->shape;
	r->has_own_key = dev->flags & DEVICE_HAS_PUBLIC_KEY;
	memcpy(r->own_key, dev->public_key, FTV_KEY_LEN);
}

/* 1: an echo on the first connection, twice at most. 0, or exit code 1. */
static int step_answer(struct run *run)
{
	struct probe_report *r = &run->r;
	struct probe_reply rep;
	double t0;
	int i, ret;

	r->answer_index = run->base;
	for (i = 0; i < 2; i++) {
		t0 = now();
		ret = echo(run, run->base, ECHO_WAIT, &rep);
		if (ret == -ENOTCONN) {
			print_error("no session with this peer: bring the tunnel up first");
			return 1;
		}
		if (ret < 0)
			return 1;
		if (ret) {
			r->answered = true;
			r->answer_ms = (unsigned int)((now() - t0) * 1000 + 0.5);
			return 0;
		}
	}
	print_error("the peer's module cannot be probed (no answer to a probe)");
	return 1;
}

/* 2: an echo on each connection; the first answered already. */
static void step_conns(struct run *run)
{
	struct probe_report *r = &run->r;
	struct probe_conn_result *c;
	struct probe_reply rep;
	unsigned int i;
	double t0;
	int ret;

	if (run->quick)
		return;
	r->conns_measured = true;
	for (i = 0; i < r->n_conns; i++) {
		c = &r->conns[i];
		if (c->index == run->base) {
			c->measured = c->answered = true;
			c->ms = r->answer_ms;
			continue;
		}
		if (now() + ECHO_WAIT > run->deadline)
			break;
		t0 = now();
		ret = echo(run, c->index, ECHO_WAIT, &rep);
		/* One that went down since is not measured. */
		if (ret < 0)
			continue;
		c->measured = true;
		c->answered = ret > 0;
		c->ms = (unsigned int)((now() - t0) * 1000 + 0.5);
	}
}

/* An echo padded to @len on the first connection, asked twice at most.
 * Returns 1 when one came whole, 0 when both were lost, -1 when the run
 * could not tell (out of time, or the connection went).
 */
static int echo_fits(struct run *run, unsigned int len, double wait)
{
	const struct probe_step step = {
		.step = FTV_PROBE_ECHO,
		.index = run->base,
		.length = len,
	};
	struct probe_reply rep;
	int i, ret;

	for (i = 0; i < 2; i++) {
		if (now() + wait > run->deadline)
			return -1;
		run->r.mtu_asks++;
		ret = ask(run, &step, wait, &rep);
		if (ret < 0)
			return -1;
		if (ret && rep.tell.length >= len)
			return 1;
	}
	return 0;
}

/* The lowest MTU of the outer routes of the session's connections now. */
static unsigned int route_mtu(struct run *run)
{
	struct probe_reply rep;
	unsigned int i, mtu = 0;

	if (probe_read(run, &rep))
		return 0;
	for (i = 0; i < rep.n_conns; i++)
		if (rep.conns[i].path_mtu &&
		    (!mtu || rep.conns[i].path_mtu < mtu))
			mtu = rep.conns[i].path_mtu;
	return mtu;
}

/*
 * 3: the longest echo that comes, from the device's MTU down to
 * PROBE_MTU_MIN in steps of PROBE_MTU_STEP; a length counts as lost only
 * when two echoes of it were, so that a random loss is not taken for
 * the path's limit. An answer is awaited four round trips, at least a
 * quarter of a second.
 */
static void step_mtu(struct run *run)
{
	struct probe_report *r = &run->r;
	unsigned int lo, hi, mid;
	double wait;
	int fits;

	if (run->quick || !r->mtu)
		return;
	wait = clamp(4 * r->answer_ms / 1000.0, 0.25, ECHO_WAIT);
	fits = echo_fits(run, r->mtu, wait);
	if (fits < 0)
		return;
	r->mtu_measured = true;
	if (fits) {
		r->mtu_fits = r->mtu;
		goto route;
	}
	hi = r->mtu;
	r->mtu_lost = hi;
	lo = PROBE_MTU_MIN < hi ? PROBE_MTU_MIN : hi / 2;
	fits = echo_fits(run, lo, wait);
	if (fits <= 0)
		goto route;
	/* lo came, hi did not. */
	while (hi - lo > PROBE_MTU_STEP) {
		/* Lengths in fours, as MTUs are set. */
		mid = (lo + hi) / 2 & ~3u;
		if (mid <= lo)
			break;
		fits = echo_fits(run, mid, wait);
		if (fits < 0)
			break;
		if (fits)
			lo = mid;
		else
			hi = mid;
	}
	r->mtu_fits = lo;
	r->mtu_lost = hi;
route:
	r->route_mtu = route_mtu(run);
}

/* Before a freeze pad of @nominal seconds on @index: what @before it had
 * carried. Returns NULL, or why it cannot go.
 */
static const char *freeze_begin(struct run *run, uint32_t index,
				double nominal, struct probe_reply *before,
				struct freeze_result *f)
{
	const struct probe_conn *c;

	memset(f, 0, sizeof(*f));
	f->index = index;
	if (run->deadline - now() < nominal + 2 * ECHO_WAIT)
		return "out of time (a run takes 30 s at most)";
	if (probe_read(run, before))
		return "the probe failed";
	c = find_conn(before, index);
	if (!c || !c->has_rx_stream)
		return "the connection went down";
	f->carried = c->rx_stream;
	return NULL;
}

/* What connection @index has brought of a freeze step's pad since
 * @before, and when it last grew; one given up meanwhile keeps what it
 * had.
 */
static void freeze_note(const struct probe_reply *before,
			const struct probe_reply *rep, uint32_t index,
			double *grew, struct freeze_result *f)
{
	const struct probe_conn *c = find_conn(rep, index);
	uint64_t came;

	if (!c)
		return;
	came = conn_came(before, c);
	if (came > f->came) {
		f->came = came;
		*grew = now();
	}
	if (c->has_rx_stream)
		f->carried = c->rx_stream;
}

/*
 * One pad of the freeze step on connection @index, watched every 50 ms
 * until the peer has sent it all and a round trip more: what came of it,
 * when it last grew, and the connection's stream towards this end then.
 * Its answer comes on @index, where a freeze loses it; if it has not come
 * within two round trips, an echo on the first connection says whether
 * the peer pads. Returns NULL, or why it could not be measured.
 */
static const char *freeze_pad(struct run *run, uint32_t index,
			      struct freeze_result *f)
{
	const struct probe_step step = {
		.step = FTV_PROBE_PAD,
		.index = index,
		.bytes = PROBE_FREEZE_BYTES,
		.rate = PROBE_PAD_KBIT,
	};
	const struct probe_step echo_step = {
		.step = FTV_PROBE_ECHO,
		.index = run->base,
	};
	double nominal = step.bytes * 8.0 / (step.rate * 1000.0);
	double rtt = run->r.answer_ms / 1000.0, t0, grew;
	struct probe_reply before, rep;
	uint32_t nonce, echo_nonce = 0;
	bool told = false;
	const char *why;

	why = freeze_begin(run, index, nominal, &before, f);
	if (why)
		return why;
	t0 = grew = now();
	run->padding = true;
	if (send_step(run, &step, &rep))
		return "the pad was refused";
	nonce = rep.nonce;
	while (now() < t0 + nominal + 2 * rtt + 0.1) {
		sleep_seconds(POLL_MAX);
		if (!told && !echo_nonce && now() > t0 + 2 * rtt + 0.05)
			echo_nonce = send_step(run, &echo_step, &rep) ? 0 :
				     rep.nonce;
		if (probe_read(run, &rep))
			break;
		if (rep.told && rep.tell.nonce == nonce && !told) {
			f->granted = rep.tell.bytes;
			told = true;
		} else if (rep.told && rep.tell.nonce == echo_nonce &&
			   rep.tell.left && !told) {
			f->granted = step.bytes;
		}
		freeze_note(&before, &rep, index, &grew, f);
	}
	stop_padding(run);
	if (!f->granted)
		return told ? "the peer's probe budget is spent (try again in a minute)" :
		       "the peer did not pad (no answer to the pad, and none padding)";
	f->froze = f->came * 10 < (uint64_t)f->granted * 9 &&
		   t0 + nominal - grew >= PROBE_FREEZE_QUIET;
	return NULL;
}

/*
 * 4: a pad on a connection other than the first (whose answers carry
 * the run), and on the next while the last froze, three at most: a
 * censor that counts bytes freezes each after about as many.
 */
static void step_freeze(struct run *run)
{
	static char one_conn[64];
	struct probe_report *r = &run->r;
	struct probe_reply rep;
	const char *why;
	unsigned int i;

	if (run->quick)
		return;
	if (r->mtu_lost) {
		r->freeze_why = "the padding is as long as this device's MTU, which the path does not carry";
		return;
	}
	if (probe_read(run, &rep)) {
		r->freeze_why = "the probe failed";
		return;
	}
	for (i = 0; i < rep.n_conns && r->n_freeze < PROBE_FREEZE_CONNS; i++) {
		if (rep.conns[i].index == run->base)
			continue;
		why = freeze_pad(run, rep.conns[i].index,
				 &r->freeze[r->n_freeze]);
		if (why) {
			if (!r->n_freeze)
				r->freeze_why = why;
			break;
		}
		if (!r->freeze[r->n_freeze++].froze)
			break;
	}
	if (!r->n_freeze && !r->freeze_why) {
		snprintf(one_conn, sizeof(one_conn),
			 "the session has one connection (flows %u)", r->flows);
		r->freeze_why = one_conn;
	}
}

/* 5: the counts and evidence at this end, and the peer's last answer's. */
static int step_resets(struct run *run)
{
	struct probe_report *r = &run->r;
	struct device *devs;
	struct peer *peer;

	if (read_peer(run, &devs, &peer))
		return -1;
	r->rst = peer->drops.count[FTV_DROPS_A_RST];
	r->fin = peer->drops.count[FTV_DROPS_A_FIN];
	r->has_here = peer->flags & PEER_HAS_RESETS;
	r->here = peer->resets;
	r->has_there = run->told && run->last_tell.has_resets;
	r->there = run->last_tell.resets;
	r->resets_measured = true;
	devices_free(devs);
	return 0;
}

/*
 * Until the peer has sent the @left bytes of a pad at @kbit that are still
 * to go, but not past @until; @t1 is when its last news came. Returns
 * NULL, or why it did not end.
 */
static const char *pad_wait(struct run *run, uint32_t left, uint32_t kbit,
			    double until, double *t1)
{
	struct probe_reply rep;
	int ret;

	while (left) {
		if (now() >= until || now() >= run->deadline) {
			stop_padding(run);
			return "the pad did not end in time";
		}
		sleep_seconds(clamp(left * 8.0 / (kbit * 1000.0), 0.05, 0.25));
		ret = echo(run, run->base, ECHO_WAIT, &rep);
		if (ret < 0) {
			stop_padding(run);
			return "the connection went down";
		}
		if (ret) {
			left = rep.tell.left;
			*t1 = now();
		}
	}
	return NULL;
}

/* Asks for the pad @step; @pad->granted is what the peer said it would
 * send, or all of it if its answer was lost but it pads. Returns NULL,
 * or why there is no pad to measure.
 */
static const char *pad_ask(struct run *run, const struct probe_step *step,
			   const struct probe_reply *before,
			   struct probe_reply *rep, struct pad_result *pad)
{
	int ret = ask(run, step, 2 * ECHO_WAIT, rep);

	if (ret > 0 && !rep->tell.bytes) {
		run->padding = false;
		return "the peer's probe budget is spent (try again in a minute)";
	}
	if (ret > 0) {
		pad->granted = rep->tell.bytes;
	} else if (!ret && echo(run, run->base, ECHO_WAIT, rep) > 0 &&
		   (rep->tell.left ||
		    came_since(before, rep) * 10 >= step->bytes)) {
		/* Its answer was lost, maybe behind the padding itself. */
		pad->granted = step->bytes;
	} else {
		stop_padding(run);
		return ret ? "the pad was refused" :
		       "the peer did not answer the pad";
	}
	return NULL;
}

/*
 * One pad of PROBE_PAD_BYTES on connection @index (or all of them), until
 * the peer sent all of it and an echo after it was answered: what came on
 * each connection meanwhile goes in @pad. Returns NULL, or why it could
 * not be measured.
 */
static const char *run_pad(struct run *run, uint32_t index, uint32_t bytes,
			   uint32_t kbit, struct pad_result *pad)
{
	const struct probe_step step = {
		.step = FTV_PROBE_PAD,
		.index = index,
		.bytes = bytes,
		.rate = kbit,
	};
	double nominal = bytes * 8.0 / (kbit * 1000.0);
	struct probe_reply before, rep;
	const char *why;
	unsigned int i;
	double t0, t1;
	int ret;

	memset(pad, 0, sizeof(*pad));
	if (run->deadline - now() < nominal + 4)
		return "out of time (a run takes 30 s at most)";
	if (probe_read(run, &before))
		return "the probe failed";
	t0 = now();
	/* Until its answer says otherwise, the peer may be padding. */
	run->padding = true;
	why = pad_ask(run, &step, &before, &rep, pad);
	if (why)
		return why;
	t1 = now();
	/* Its rate thrice over, and two answers' time, at most. */
	why = pad_wait(run, rep.tell.left, kbit, t0 + 3 * nominal + 2 * ECHO_WAIT,
		       &t1);
	if (why)
		return why;
	run->padding = false;
	/* The answer to an echo sent after the last of it comes after it. */
	ret = echo(run, run->base, ECHO_WAIT, &rep);
	if (!ret)
		ret = echo(run, run->base, ECHO_WAIT, &rep);
	if (ret <= 0)
		return "no answer after the pad";
	pad->seconds = t1 - t0;
	pad->n = rep.n_conns;
	for (i = 0; i < rep.n_conns; i++) {
		pad->index[i] = rep.conns[i].index;
		pad->came[i] = conn_came(&before, &rep.conns[i]);
	}
	return NULL;
}

/* Whether the freeze step saw a connection freeze. */
static bool any_froze(const struct probe_report *r)
{
	unsigned int i;

	for (i = 0; i < r->n_freeze; i++)
		if (r->freeze[i].froze)
			return true;
	return false;
}

/* 6: one pad on the first connection and, if it came short, one on all. */
static void step_policing(struct run *run)
{
	static char one_conn[64];
	struct probe_report *r = &run->r;
	struct probe_reply rep;
	unsigned int n;

	if (probe_read(run, &rep)) {
		r->not_measured = "the probe failed";
		return;
	}
	if (rep.n_conns < 2) {
		snprintf(one_conn, sizeof(one_conn),
			 "the session has one connection (flows %u)", r->flows);
		r->not_measured = one_conn;
		return;
	}
	/* A freeze would take the first connection, and the run with it. */
	if (any_froze(r)) {
		r->not_measured = "a connection froze (a pad on the first would freeze it)";
		return;
	}
	/* The peer pads in messages as long as the device's MTU. */
	if (r->mtu_lost) {
		r->not_measured = "the padding is as long as this device's MTU, which the path does not carry";
		return;
	}
	r->not_measured = run_pad(run, run->base, PROBE_PAD_BYTES,
				  PROBE_PAD_KBIT, &r->one);
	if (r->not_measured)
		memset(&r->one, 0, sizeof(r->one));
	if (r->not_measured || pad_whole(&r->one))
		return;
	/* A pad over all is asked for on the first connection. */
	if (run->base != 0 || !find_conn(&rep, 0))
		return;
	/* As long, at half the rate on each connection (of at most four's
	 * worth): a policer of one connection holds each to what it held
	 * the one to, a bottleneck of the path all together.
	 */
	n = rep.n_conns < 4 ? rep.n_conns : 4;
	r->not_measured = run_pad(run, FTV_PROBE_INDEX_ALL,
				  n * (PROBE_PAD_BYTES / 2),
				  n * (PROBE_PAD_KBIT / 2), &r->all);
	if (r->not_measured)
		memset(&r->all, 0, sizeof(r->all));
}

/* 7: the pad's shortfall is probe-judge.c's; FEC's counters are here. */
static int step_loss(struct run *run)
{
	struct probe_report *r = &run->r;
	struct device *devs;
	struct peer *peer;

	if (read_peer(run, &devs, &peer))
		return -1;
	if (peer->flags & PEER_HAS_FEC_STATS) {
		r->peer_loss_known = peer->fec_stats.active;
		r->peer_loss_ppm = peer->fec_stats.loss_ppm;
		r->has_rebuilt = true;
		r->rebuilt = peer->fec_stats.rebuilt;
	}
	r->loss_measured = true;
	devices_free(devs);
	return 0;
}

/* Whether the join numbered @index came up, as the module recorded it:
 * once the peer's answer opened on it (or its SYN was answered, from a
 * peer that does not answer joins). Being among the connections says
 * nothing: one waits there for that answer.
 */
static bool join_came_up(const struct probe_reply *rep, uint32_t index)
{
	unsigned int i;

	for (i = 0; i < rep->n_joins_up; i++)
		if (rep->joins_up[i] == index)
			return true;
	return false;
}

/* Why a join step failed, for the report. */
static const char *join_refused(int err)
{
	switch (err) {
	case -EOPNOTSUPP:
		return "the peer's module takes no joins";
	case -EBUSY:
		return "the session takes no more joins (all the peer takes, or 16 lost in a row)";
	case -ENOTCONN:
		return "the session went down";
	case -ERANGE:
	case -EINVAL:
		return "this end's module cannot open a join for a probe";
	default:
		return "a join could not be opened";
	}
}

/* Opens the reach step's join to the endpoint numbered @ep (@current:
 * the session's), opening as @shape says; 0 or the step's error.
 */
static int reach_open(struct run *run, uint32_t ep, bool current,
		      enum probe_shape shape, uint32_t *joined)
{
	const struct probe_step step = {
		.step = FTV_PROBE_JOIN, .index = ep, .shape = shape,
	};
	struct probe_report *r = &run->r;
	struct reach_result *res;
	struct probe_reply rep;
	int ret;

	ret = ipc_probe(run->ifname, run->key, &step, &rep);
	if (ret)
		return ret;
	res = &r->reach[r->n_reach];
	joined[r->n_reach++] = rep.joined;
	res->current = current;
	res->shape = shape;
	res->ep = r->endpoints.count ? r->endpoints.ep[ep] : r->endpoint;
	return 0;
}

/* The reach step's joins to the current endpoint: as many shaped as
 * opening as they are, to tell an opening filter. A module that cannot
 * shape a probe's join (EINVAL) opens them as its device does.
 */
static int reach_open_fresh(struct run *run, uint32_t cur, uint32_t *joined)
{
	unsigned int i, before = run->r.n_reach;
	int ret = 0;

	for (i = 0; !ret && i < 2 * PROBE_REACH_FRESH; i++)
		ret = reach_open(run, cur, true,
				 i % 2 ? PROBE_SHAPE_OFF : PROBE_SHAPE_ON,
				 joined);
	if (ret != -EINVAL || run->r.n_reach != before)
		return ret;
	run->r.openings_why = "this end's module cannot shape a probe's join";
	ret = 0;
	for (i = 0; !ret && i < PROBE_REACH_FRESH; i++)
		ret = reach_open(run, cur, true, PROBE_SHAPE_DEVICE, joined);
	return ret;
}

/* 8: joins from fresh source ports to the current endpoint, shaped and
 * not, and to each other endpoint of the list; which came up within
 * PROBE_REACH_WAIT.
 */
static void step_reach(struct run *run)
{
	struct probe_report *r = &run->r;
	uint32_t joined[PROBE_REACH_MAX], cur = 0, i;
	struct probe_reply rep;
	double t0 = now();
	unsigned int n, up;
	int ret = 0;

	if (!r->dials) {
		r->reach_why = "the peer opens the sessions: probe from its end";
		return;
	}
	if (t0 + PROBE_REACH_WAIT > run->deadline) {
		r->reach_why = "out of time";
		return;
	}
	for (i = 0; i < r->endpoints.count; i++)
		if (endpoint_equal(&r->endpoints.ep[i], &r->endpoint))
			cur = i;
	/*
	 * The other endpoints first: the peer expects the next four joins
	 * of a session only, so joins lost to a blocked port would leave
	 * none for the others.
	 */
	for (i = 0; !ret && i < r->endpoints.count; i++)
		if (i != cur)
			ret = reach_open(run, i, false, PROBE_SHAPE_DEVICE,
					 joined);
	if (!ret)
		ret = reach_open_fresh(run, cur, joined);
	if (ret && !r->n_reach) {
		r->reach_why = join_refused(ret);
		return;
	}
	n = r->n_reach;
	for (up = 0; up < n && now() < t0 + PROBE_REACH_WAIT;) {
		sleep_seconds(clamp((now() - t0) / 4, POLL_MIN, POLL_MAX));
		if (probe_read(run, &rep))
			break;
		for (i = 0; i < n; i++) {
			if (r->reach[i].up || !join_came_up(&rep, joined[i]))
				continue;
			r->reach[i].up = true;
			r->reach[i].ms = (unsigned int)((now() - t0) * 1000 + 0.5);
			up++;
		}
	}
	/* A join refused part way (the session's last it takes) is not
	 * counted as one that got no answer.
	 */
	if (ret && up < n)
		r->reach_why = join_refused(ret);
	if (ret && up < n)
		r->n_reach = 0;
}

/* What came on the connections since the run began, and the asks. */
static void count_bytes(struct run *run)
{
	struct probe_reply rep;

	run->r.bytes = run->ask_bytes;
	if (!probe_read(run, &rep))
		run->r.bytes += came_since(&run->first, &rep);
	run->r.seconds = now() - run->start;
}

/* The device's shape setting, when the reach step recommends one. */
static int apply_shape(struct run *run, FILE *out)
{
	const struct probe_report *r = &run->r;
	struct device dev = { .flags = DEVICE_HAS_SHAPE };

	if (!r->rec_shape)
		return 0;
	snprintf(dev.name, sizeof(dev.name), "%s", run->ifname);
	dev.shape = r->rec_shape_on;
	if (ipc_set_device(&dev))
		return 1;
	fprintf(out, "%sapplied: ftvctl set %s shape %s\n",
		run->json ? "ftvctl: " : "", run->ifname,
		r->rec_shape_on ? "on" : "off");
	return 0;
}

/* The device's MTU, when the path MTU step recommends one. */
static int apply_mtu(struct run *run, FILE *out)
{
	const struct probe_report *r = &run->r;

	if (!r->rec_mtu)
		return 0;
	if (ipc_set_mtu(run->ifname, r->rec_mtu_n))
		return 1;
	fprintf(out, "%sapplied: ip link set dev %s mtu %u\n",
		run->json ? "ftvctl: " : "", run->ifname, r->rec_mtu_n);
	return 0;
}

static int apply(struct run *run)
{
	struct probe_report *r = &run->r;
	char args[PROBE_ARGS_LEN], key[KEY_B64_LEN + 1];
	struct peer peer = { .flags = PEER_HAS_PUBLIC_KEY };
	FILE *out = run->json ? stderr : stdout;

	if (!probe_recommended(r, args, sizeof(args))) {
		if (!r->rec_mtu && !r->rec_shape)
			fprintf(out, "%snothing to apply\n",
				run->json ? "ftvctl: " : "");
		return apply_shape(run, out) ?: apply_mtu(run, out);
	}
	memcpy(peer.public_key, run->key, FTV_KEY_LEN);
	if (r->rec_flows) {
		peer.flags |= PEER_HAS_FLOWS;
		peer.flows = r->rec_flows_n;
	}
	if (r->rec_fec) {
		peer.flags |= PEER_HAS_FEC;
		peer.fec = (struct fec){ .mode = FTV_FEC_AUTO };
	}
	if (r->rec_rotate) {
		peer.flags |= PEER_HAS_ROTATE;
		peer.rotate = r->rec_rotate_n;
	}
	if (r->rec_endpoints) {
		peer.flags |= PEER_HAS_ENDPOINT;
		peer.endpoint = r->rec_list.ep[0];
		if (r->rec_list.count > 1) {
			peer.flags |= PEER_HAS_ENDPOINTS;
			peer.endpoints = &r->rec_list;
		}
	}
	if (ipc_set_peer(run->ifname, &peer))
		return 1;
	key_to_base64(key, run->key);
	fprintf(out, "%sapplied: ftvctl peer set %s %s %s\n",
		run->json ? "ftvctl: " : "", run->ifname, key, args);
	return apply_shape(run, out) ?: apply_mtu(run, out);
}

/* ---- the subcommand ----------------------------------------------------- */

/* In text, each measurement's line as soon as it is known. */
static void progress(struct run *run, enum probe_part part)
{
	if (run->json)
		return;
	probe_judge(&run->r);
	probe_print_part(&run->r, part);
	fflush(stdout);
}

/* The settings, and the session's connections as the run starts. */
static int probe_begin(struct run *run)
{
	struct probe_report *r = &run->r;
	struct device *devs;
	struct peer *peer;
	unsigned int i;

	run->start = now();
	run->deadline = run->start + PROBE_SECONDS - 1;
	if (read_peer(run, &devs, &peer))
		return -1;
	take_settings(run, devs, peer);
	devices_free(devs);
	r->mtu = ipc_get_mtu(run->ifname);
	if (probe_read(run, &run->first))
		return -1;
	if (!run->first.n_conns) {
		print_error("no session with this peer: bring the tunnel up first");
		return -1;
	}
	run->base = find_conn(&run->first, 0) ? 0 : run->first.conns[0].index;
	r->n_conns = run->first.n_conns;
	for (i = 0; i < r->n_conns; i++) {
		r->conns[i].index = run->first.conns[i].index;
		r->conns[i].rx_bytes = run->first.conns[i].rx_bytes;
	}
	return 0;
}

static int probe_run(struct run *run)
{
	struct probe_report *r = &run->r;
	int ret;

	if (probe_begin(run))
		return 1;
	ret = step_answer(run);
	if (ret) {
		if (run->json && !r->answered) {
			count_bytes(run);
			probe_judge(r);
			probe_print_json(r);
		}
		return ret;
	}
	progress(run, PROBE_PART_ANSWER);
	step_conns(run);
	progress(run, PROBE_PART_CONNS);
	step_mtu(run);
	progress(run, PROBE_PART_MTU);
	step_freeze(run);
	progress(run, PROBE_PART_FREEZE);
	if (step_resets(run))
		return 1;
	progress(run, PROBE_PART_RESETS);
	step_policing(run);
	stop_padding(run);
	progress(run, PROBE_PART_POLICING);
	if (step_loss(run))
		return 1;
	progress(run, PROBE_PART_LOSS);
	step_reach(run);
	progress(run, PROBE_PART_REACH);
	count_bytes(run);
	probe_judge(r);
	if (run->json)
		probe_print_json(r);
	else
		probe_print_part(r, PROBE_PART_END);
	if (finish_output())
		return 1;
	return run->apply ? apply(run) : 0;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: %s probe <interface> <public-key> [--json] [--quick] [--apply]\n",
		PROG_NAME);
}

int probe_main(int argc, char **argv)
{
	struct run *run;
	const char *ifname = NULL, *key = NULL;
	int i, ret = 1;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	run = calloc(1, sizeof(*run));
	if (!run) {
		perror(PROG_NAME);
		return 1;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			run->json = true;
		} else if (!strcmp(argv[i], "--quick")) {
			run->quick = true;
		} else if (!strcmp(argv[i], "--apply")) {
			run->apply = true;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			print_error("probe: unknown option '%s'", argv[i]);
			usage(stderr);
			goto out;
		} else if (!ifname) {
			ifname = argv[i];
		} else if (!key) {
			key = argv[i];
		} else {
			usage(stderr);
			goto out;
		}
	}
	if (!key) {
		usage(stderr);
		goto out;
	}
	if (!parse_ifname(run->ifname, ifname) ||
	    !parse_public_key(run->key, key))
		goto out;
	memcpy(run->r.ifname, run->ifname, sizeof(run->r.ifname));
	memcpy(run->r.key, run->key, FTV_KEY_LEN);
	ret = probe_run(run);
	/* Whatever went wrong, the peer sends no more padding for us. */
	stop_padding(run);
out:
	free(run);
	return ret;
}

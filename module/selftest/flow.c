// SPDX-License-Identifier: GPL-2.0
/* Included at the end of flow.c in debug builds. */

#include <linux/slab.h>

/* A connection's stall clock at one moment, relative to now (ms ago; 0
 * for never), and whether the initiator may find it stalled then.
 */
struct flow_case {
	const char *what;
	unsigned int sent;	/* messages sent and not reported */
	unsigned int una_ms;	/* its data began to wait */
	unsigned int asked_ms;	/* the first keepalive that asked */
	bool ask;		/* a keepalive asks now */
	bool overdue;
};

/* With no round-trip sample the patience is 200 + 200 + 2 x 50 ms, and
 * a keepalive asks once data waited one check (flow_suspect_wait()).
 */
static const struct flow_case flow_cases[] __initconst = {
	{ "nothing waits", 0, 2000, 0, false, false },
	{ "just sent", 1, 20, 0, false, false },
	/* A policer dropped the tail: the peer saw no gap, and was never
	 * asked. Until 2026-11-30 this was taken for a stall.
	 */
	{ "waited, never asked", 1, 2000, 0, true, false },
	{ "asked 300 ms ago", 1, 2000, 300, true, false },
	{ "asked 700 ms ago", 1, 2000, 700, true, true },
	{ "asked before the data waited", 1, 600, 800, true, false },
};

static bool __init flow_case_run(struct ftv_conn *c, const struct flow_case *t)
{
	unsigned long now = jiffies;
	bool ask, overdue;

	c->acked_high = 1000;
	c->data_high = 1000 + t->sent;
	c->reported_since = now - msecs_to_jiffies(t->una_ms);
	c->probed_at = t->asked_ms ? now - msecs_to_jiffies(t->asked_ms) :
				     c->reported_since - 1;
	/* Heard a moment ago: asking does not depend on it. */
	c->heard_at = now;
	ask = flow_unanswered(c, now, flow_suspect_wait(c->session));
	overdue = flow_overdue(c, now);
	if (ask != t->ask || overdue != t->overdue) {
		pr_err("flow self-test: %s: asks %d, overdue %d; want %d, %d\n",
		       t->what, ask, overdue, t->ask, t->overdue);
		return false;
	}
	return true;
}

/* What a keepalive's report does: it moves what was reported, never past
 * what went, and its echo is a round trip sample. The TCP header's
 * acknowledgment, which anyone on the path could change, moves nothing
 * the verdict reads.
 */
static bool __init flow_report_run(struct ftv_conn *c)
{
	struct ftv_msg_ack msg = { .type = FTV_CONTROL_ACK };
	unsigned long now = jiffies;
	bool ok = true;

	atomic64_set(&c->session->send_counter, 2000);
	c->acked_high = 1000;
	c->data_high = 1500;
	c->reported_since = now - msecs_to_jiffies(2000);
	c->probed_at = now - msecs_to_jiffies(700);
	/* All of it acknowledged in the header, none of it reported. */
	atomic_set(&c->snd_una, 7000);
	atomic_set(&c->snd_nxt, 7000);
	if (!flow_overdue(c, now)) {
		pr_err("flow self-test: acknowledged only in the header: not overdue\n");
		ok = false;
	}
	msg.high = cpu_to_le64(5000);
	msg.tsval = cpu_to_le32(77);
	msg.echo = cpu_to_le32(ftv_conn_tsval(c) - 50);
	msg.held = cpu_to_le32(10);
	ftv_flow_ack_received(c, &msg);
	if (c->acked_high != 2000 || flow_overdue(c, jiffies)) {
		pr_err("flow self-test: a report past what went: acked %llu\n",
		       c->acked_high);
		ok = false;
	}
	/* 40 ms, and a tick of the clock if one passed meanwhile. */
	if (c->session->ack_srtt_ms < 40 ||
	    c->session->ack_srtt_ms > 40 + jiffies_to_msecs(2) ||
	    c->ack_echo != 77) {
		pr_err("flow self-test: echo: srtt %u ms, echo %u\n",
		       c->session->ack_srtt_ms, c->ack_echo);
		ok = false;
	}
	c->session->ack_srtt_ms = 0;
	return ok;
}

/* A responder's connection with a budget, and what it may still carry. */
struct flow_budget_case {
	const char *what;
	unsigned int budget;
	unsigned int sent;	/* since it was established */
	unsigned int len;	/* the message's inner length */
	u8 k, m;		/* the session's FEC */
	bool may_send;
	bool repairs_fit;
};

static const struct flow_budget_case flow_budget_cases[] __initconst = {
	{ "no FEC, room", 10240, 4000, 1400, 0, 0, true, true },
	{ "no FEC, full", 10240, 9000, 1400, 0, 0, false, false },
	/* A repair message is as long as a segment: 1400 + 128 and one
	 * repair of 1448 + 128 do not fit in 2,500 left. Until 2026-11-30
	 * they went, and connections crossed a censor's count.
	 */
	{ "FEC, the repair does not fit", 10240, 7740, 1400, 32, 2, true, false },
	{ "FEC, the repair fits", 10240, 4000, 1400, 32, 2, true, true },
	/* auto's highest K:M gives a lone packet 7 repairs, 11 KB: never
	 * in a 10 KB budget, so the packet goes without them.
	 */
	{ "FEC 16:16, a lone packet", 10240, 0, 1400, 16, 16, true, false },
	/* A superpacket of 45 segments pays 45 overheads; until
	 * 2026-11-30 it paid one.
	 */
	{ "superpacket, overheads", 70000, 0, 64000, 0, 0, true, true },
	{ "superpacket, too long", 65000, 0, 64000, 0, 0, false, false },
};

static bool __init flow_budget_run(struct ftv_conn *c,
				   const struct flow_budget_case *t)
{
	bool may, fit;

	c->budget = t->budget;
	c->snd_start = 5000;
	atomic_set(&c->snd_nxt, 5000 + t->sent);
	atomic_set(&c->queued, 0);
	c->session->fec.k = t->k;
	c->session->fec.m = t->m;
	may = ftv_flow_may_send(c, t->len);
	fit = ftv_flow_repairs_fit(c, t->len, t->k, t->m);
	if (may != t->may_send || fit != t->repairs_fit) {
		pr_err("flow self-test: %s: may send %d, repairs fit %d; want %d, %d\n",
		       t->what, may, fit, t->may_send, t->repairs_fit);
		return false;
	}
	return true;
}

/* Two stalls, the bytes towards this end each connection had carried,
 * and the budget they teach rotate auto (0: none).
 */
struct flow_learn_case {
	const char *what;
	u32 before, carried, budget;
};

static const struct flow_learn_case flow_learn_cases[] __initconst = {
	{ "a 16 KB freeze", 14294, 15855, 10719 },
	{ "a 16 KB freeze, the other way", 14552, 12858, 9642 },
	/* Two connections behind a per-connection policer, taken for
	 * stalled; until 2026-12-01 they taught a 12 KB budget.
	 */
	{ "policed, not alike", 16219, 28860, 0 },
	{ "a third over", 12000, 16000, 9000 },
	{ "past a third", 12000, 16001, 0 },
	{ "no stall before", 0, 15000, 0 },
	{ "a small budget", 4000, 4500, FTV_ROTATE_MIN },
};

static bool __init flow_learn_run(const struct flow_learn_case *t)
{
	u32 budget = flow_freeze_budget(t->before, t->carried);

	if (budget != t->budget) {
		pr_err("flow self-test: %s: budget %u; want %u\n",
		       t->what, budget, t->budget);
		return false;
	}
	return true;
}

/**
 * ftv_flow_selftest - when a connection's data is asked for, when it
 *	counts as stalled, what a budget lets it carry, and which stalls
 *	teach one
 *
 * Return: true if every case gives what it should.
 */
bool __init ftv_flow_selftest(void)
{
	struct ftv_session *s;
	struct ftv_conn *c;
	bool ok = true;
	unsigned int i;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!s || !c) {
		kfree(s);
		kfree(c);
		return false;
	}
	c->session = s;
	for (i = 0; i < ARRAY_SIZE(flow_cases); i++)
		ok &= flow_case_run(c, &flow_cases[i]);
	ok &= flow_report_run(c);
	c->is_initiator = false;
	for (i = 0; i < ARRAY_SIZE(flow_budget_cases); i++)
		ok &= flow_budget_run(c, &flow_budget_cases[i]);
	for (i = 0; i < ARRAY_SIZE(flow_learn_cases); i++)
		ok &= flow_learn_run(&flow_learn_cases[i]);
	kfree(c);
	kfree(s);
	if (ok)
		pr_info("flow self-tests: pass\n");
	return ok;
}

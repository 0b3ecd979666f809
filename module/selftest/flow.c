// SPDX-License-Identifier: GPL-2.0
/* Included at the end of flow.c in debug builds. */

#include <linux/slab.h>

/* A connection's stall clock at one moment, relative to now (ms ago; 0
 * for never), and whether the initiator may find it stalled then.
 */
struct flow_case {
	const char *what;
	unsigned int sent;	/* bytes sent and not acknowledged */
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
	{ "just sent", 1400, 20, 0, false, false },
	/* A policer dropped the tail: the peer saw no gap, and was never
	 * asked. Until 2026-11-30 this was taken for a stall.
	 */
	{ "waited, never asked", 1400, 2000, 0, true, false },
	{ "asked 300 ms ago", 1400, 2000, 300, true, false },
	{ "asked 700 ms ago", 1400, 2000, 700, true, true },
	{ "asked before the data waited", 1400, 600, 800, true, false },
};

static bool __init flow_case_run(struct ftv_conn *c, const struct flow_case *t)
{
	unsigned long now = jiffies;
	bool ask, overdue;

	atomic_set(&c->snd_una, 1000);
	atomic_set(&c->snd_nxt, 1000 + t->sent);
	c->data_end = 1000 + t->sent;
	c->una_since = now - msecs_to_jiffies(t->una_ms);
	c->probed_at = t->asked_ms ? now - msecs_to_jiffies(t->asked_ms) :
				     c->una_since - 1;
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

/**
 * ftv_flow_selftest - when a connection's data is asked for, and when it
 *	counts as stalled
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
	kfree(c);
	kfree(s);
	if (ok)
		pr_info("flow self-tests: pass\n");
	return ok;
}

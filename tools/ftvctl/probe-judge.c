// SPDX-License-Identifier: GPL-2.0
/*
 * probe's verdicts, from numbers alone (design-probe.md, section 3): each
 * names its evidence, and what the numbers do not support is "not seen".
 * The rules:
 *
 *  - a connection that does not answer an echo within 1 s, while the one
 *    the probe asked on first does: "connection does not answer";
 *  - an echo as long as the device's MTU lost twice, where a shorter one
 *    came: "path MTU below the device's" when the outer route's MTU fell
 *    under what the lost echo needed (an ICMP error came), "path MTU
 *    black hole" when it did not (the errors are dropped on the way, and
 *    the inner packets of that length vanish); either recommends the
 *    longest echo that came as the device's MTU;
 *  - pads on up to three connections other than the first, in turn while
 *    the last froze: one froze when less than 90 % of its pad came and
 *    nothing of it for the last quarter second the peer sent it; two or
 *    more that froze after about as many bytes towards this end (within
 *    a factor of two) and under 1 MB: "byte-budget freeze", which
 *    recommends rotate at three quarters of the least (in KiB, 4k at
 *    least);
 *  - any RST or FIN this end counted on the peer's connections, or one the
 *    peer reports on this end's: "injected resets" (ftv sends neither);
 *  - a pad on one connection against the same pad spread over all: one
 *    bringing 90 % of it is no limit; all bringing at least 2.5 times
 *    what one did (over two or three connections 1.25 or 1.875 times),
 *    each within a third of it, a per-connection policer (flows 4); all
 *    bringing at most 1.2 times one, a shared bottleneck;
 *  - more than 0.5 % lost, of the pad (when no policer or bottleneck
 *    explains its shortfall) or as the peer reports: "loss" (fec auto when
 *    fec is off, but not against a policer, whose drops repairs do not
 *    rebuild);
 *  - joins from two fresh source ports to the endpoint the session rides,
 *    neither up in 2.5 s, while the session's connection answers: "port
 *    blocked" (new connections there fail, a new session's too), which
 *    recommends the endpoints of the list that came up, or, with none,
 *    flows 1 and rotate off, so that the tunnel keeps the connection it
 *    has; a join to another endpoint of the list that did not come up
 *    where one to some endpoint did: "endpoint blocked".
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "encoding.h"
#include "probe-judge.h"
#include "settings.h"

uint64_t pad_total(const struct pad_result *pad)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < pad->n; i++)
		sum += pad->came[i];
	return sum;
}

unsigned int pad_kbit(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (unsigned int)(bytes * 8 / seconds / 1000 + 0.5) : 0;
}

bool pad_whole(const struct pad_result *one)
{
	return one->granted && pad_total(one) * 10 >= (uint64_t)one->granted * 9;
}

/* The connection that brought most of a pad: the one it went on. */
static uint32_t pad_main(const struct pad_result *pad)
{
	unsigned int i, best = 0;

	for (i = 1; i < pad->n; i++)
		if (pad->came[i] > pad->came[best])
			best = i;
	return pad->n ? pad->index[best] : 0;
}

enum policing judge_policing(const struct pad_result *one,
			     const struct pad_result *all)
{
	uint64_t o = pad_total(one), a;
	unsigned int i;

	if (!one->granted)
		return POLICING_NOT_MEASURED;
	if (pad_whole(one))
		return POLICING_NONE;
	/* Nothing on one connection is no rate to compare with. */
	if (!all || all->n < 2 || !all->granted || !o)
		return POLICING_UNCLEAR;
	a = pad_total(all);
	/* 2.5 times over four; as much in proportion over two or three,
	 * which can bring no more than twice or thrice one.
	 */
	if (8 * a >= 5 * (all->n < 4 ? all->n : 4) * o) {
		/* The connection the first pad went on may bring less: a
		 * policer's bucket it emptied then is still low.
		 */
		for (i = 0; i < all->n; i++)
			if (all->index[i] != pad_main(one) &&
			    (3 * all->came[i] < 2 * o || 3 * all->came[i] > 4 * o))
				break;
		if (i == all->n)
			return POLICING_PER_CONN;
	}
	if (5 * a <= 6 * o)
		return POLICING_SHARED;
	return POLICING_UNCLEAR;
}

uint32_t pad_loss_ppm(uint32_t granted, uint64_t came, unsigned int mtu)
{
	uint64_t len = mtu ? (mtu < 64 ? 64 : mtu) : 1420;
	uint64_t expected = granted +
			    (granted + len - 1) / len * PROBE_MSG_OVERHEAD;

	if (!granted || came >= expected)
		return 0;
	return (uint32_t)((expected - came) * 1000000 / expected);
}

/* ---- the verdicts ------------------------------------------------------- */

/* Appends to a fixed buffer, cutting what does not fit. */
static void add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static struct probe_verdict *verdict(struct probe_report *r, const char *name)
{
	struct probe_verdict *v;

	if (r->n_verdicts == PROBE_VERDICTS_MAX)
		return NULL;
	v = &r->verdicts[r->n_verdicts++];
	v->name = name;
	v->evidence[0] = '\0';
	return v;
}

static void silent_verdicts(struct probe_report *r)
{
	struct probe_verdict *v;
	unsigned int i;

	for (i = 0; i < r->n_conns; i++) {
		if (!r->conns[i].measured || r->conns[i].answered)
			continue;
		v = verdict(r, PROBE_V_SILENT);
		if (!v)
			return;
		add(v->evidence, sizeof(v->evidence),
		    "connection %u: no answer to an echo within 1 s, while connection %u answered in %u ms",
		    r->conns[i].index, r->answer_index, r->answer_ms);
	}
}

/* Whether an ICMP error lowered the route under what the lost echo
 * needed in its outer packet.
 */
static bool mtu_icmp(const struct probe_report *r)
{
	return r->route_mtu && r->route_mtu < r->mtu_lost + r->outer_overhead;
}

static void mtu_verdicts(struct probe_report *r)
{
	struct probe_verdict *v;
	bool icmp = mtu_icmp(r);

	if (!r->mtu_measured || !r->mtu_lost || !r->mtu_fits)
		return;
	r->rec_mtu = true;
	r->rec_mtu_n = r->mtu_fits;
	v = verdict(r, icmp ? PROBE_V_MTU_LOW : PROBE_V_MTU_HOLE);
	if (!v)
		return;
	add(v->evidence, sizeof(v->evidence),
	    "echoes of %u bytes (outer packets of %u) were lost twice while one of %u came",
	    r->mtu_lost, r->mtu_lost + r->outer_overhead, r->mtu_fits);
	if (icmp)
		add(v->evidence, sizeof(v->evidence),
		    "; an ICMP error lowered the route's MTU to %u",
		    r->route_mtu);
	else if (r->route_mtu)
		add(v->evidence, sizeof(v->evidence),
		    "; no ICMP error came: the route's MTU is still %u",
		    r->route_mtu);
	else
		add(v->evidence, sizeof(v->evidence),
		    "; no ICMP error came");
}

/* The connections that froze: how many, and the least they carried. */
static unsigned int frozen(const struct probe_report *r, uint64_t *least,
			   uint64_t *most)
{
	unsigned int i, n = 0;

	*least = UINT64_MAX;
	*most = 0;
	for (i = 0; i < r->n_freeze; i++) {
		if (!r->freeze[i].froze)
			continue;
		n++;
		if (r->freeze[i].carried < *least)
			*least = r->freeze[i].carried;
		if (r->freeze[i].carried > *most)
			*most = r->freeze[i].carried;
	}
	return n;
}

/* "1 after 15400 bytes, 2 after 15512" */
static void freeze_evidence(const struct probe_report *r, char *buf,
			    size_t len)
{
	const struct freeze_result *f;
	const char *sep = "";
	unsigned int i;

	for (i = 0; i < r->n_freeze; i++) {
		f = &r->freeze[i];
		if (f->froze)
			add(buf, len, "%sconnection %u froze after %" PRIu64 " bytes towards this end (%" PRIu64 " of a pad of %u came)",
			    sep, f->index, f->carried, f->came, f->granted);
		else
			add(buf, len, "%sconnection %u brought %" PRIu64 " of a pad of %u%s",
			    sep, f->index, f->came, f->granted,
			    f->came * 10 >= (uint64_t)f->granted * 9 ? "" :
			    ", still coming at its end");
		sep = "; ";
	}
}

static void freeze_verdicts(struct probe_report *r)
{
	struct probe_verdict *v;
	uint64_t least, most;
	uint32_t budget;

	if (frozen(r, &least, &most) < 2 || most > 2 * least ||
	    most >= PROBE_FREEZE_MAX)
		return;
	budget = (uint32_t)(least / 4 * 3) & ~1023u;
	r->rec_rotate = true;
	r->rec_rotate_n = budget < PROBE_ROTATE_MIN ? PROBE_ROTATE_MIN : budget;
	v = verdict(r, PROBE_V_FREEZE);
	if (v)
		freeze_evidence(r, v->evidence, sizeof(v->evidence));
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/*
 * "TTL 40 where the peer's segments come with 63: something on the path
 * sent it", as troubleshooting.md reads it: an injector sends with its own
 * TTL, the peer's host (its TCP stack, for a connection its module forgot)
 * with the peer's.
 */
static void add_reset_mark(char *buf, size_t len, const struct resets *rs,
			   const char *whose, const char *host)
{
	add(buf, len, "TTL %u", rs->ttl);
	if (!rs->has_peer_ttl)
		return;
	if (rs->ttl != rs->peer_ttl)
		add(buf, len, " where %s segments come with %u: something on the path sent it",
		    whose, rs->peer_ttl);
	else
		add(buf, len, ", as %s segments: most likely %s sent it",
		    whose, host);
}

static void resets_evidence(const struct probe_report *r, char *buf,
			    size_t len)
{
	buf[0] = '\0';
	if (r->rst || r->fin) {
		add(buf, len, "this end counted ");
		if (r->rst)
			add(buf, len, "%" PRIu64 " RST%s%s", r->rst,
			    plural(r->rst), r->fin ? " and " : "");
		if (r->fin)
			add(buf, len, "%" PRIu64 " FIN%s", r->fin,
			    plural(r->fin));
		if (r->has_here) {
			add(buf, len, ", the last with ");
			add_reset_mark(buf, len, &r->here, "the peer's",
				       "the peer's host");
		}
	} else {
		add(buf, len, "no RST or FIN at this end");
	}
	if (r->has_there) {
		add(buf, len, "; the peer saw one on this end's connections, with ");
		add_reset_mark(buf, len, &r->there, "this end's",
			       "this end's host");
	} else {
		add(buf, len, "; none at the peer");
	}
}

/* "one connection: 2010 kbit/s; spread over 4: 7890 kbit/s, of which 0: 1990, ..." */
static void pads_evidence(const struct probe_report *r, char *buf, size_t len)
{
	const struct pad_result *all = &r->all;
	unsigned int i;

	add(buf, len, "one connection: %u kbit/s",
	    pad_kbit(pad_total(&r->one), r->one.seconds));
	if (!all->n)
		return;
	add(buf, len, "; spread over %u: %u kbit/s, of which", all->n,
	    pad_kbit(pad_total(all), all->seconds));
	for (i = 0; i < all->n; i++)
		add(buf, len, "%s %u: %u", i ? "," : "", all->index[i],
		    pad_kbit(all->came[i], all->seconds));
}

static void policing_verdicts(struct probe_report *r)
{
	struct probe_verdict *v;

	if (r->not_measured)
		r->policing = POLICING_NOT_MEASURED;
	else
		r->policing = judge_policing(&r->one, &r->all);
	if (r->policing == POLICING_PER_CONN) {
		r->rec_flows_n = r->flows > PROBE_POLICED_FLOWS ?
				 r->flows : PROBE_POLICED_FLOWS;
		r->rec_flows = r->dials;
		r->rec_flows_at_peer = !r->dials;
		v = verdict(r, PROBE_V_PER_CONN);
	} else if (r->policing == POLICING_SHARED) {
		v = verdict(r, PROBE_V_SHARED);
	} else {
		return;
	}
	if (!v)
		return;
	pads_evidence(r, v->evidence, sizeof(v->evidence));
	if (r->rec_flows_at_peer)
		add(v->evidence, sizeof(v->evidence),
		    "; the peer dials, so flows is set there");
}

static bool loss_seen(const struct probe_report *r)
{
	return r->loss_measured &&
	       ((r->pad_loss_known && r->pad_loss_ppm > PROBE_LOSS_PPM) ||
		(r->peer_loss_known && r->peer_loss_ppm > PROBE_LOSS_PPM));
}

static void loss_evidence(const struct probe_report *r, char *buf, size_t len)
{
	const char *sep = "";

	buf[0] = '\0';
	if (r->pad_loss_known) {
		add(buf, len, "%.1f %% of the pad did not come",
		    r->pad_loss_ppm / 1e4);
		sep = "; ";
	} else if (r->policing == POLICING_PER_CONN ||
		   r->policing == POLICING_SHARED) {
		add(buf, len, "the pad's shortfall is the %s's",
		    r->policing == POLICING_PER_CONN ? "policer" : "bottleneck");
		sep = "; ";
	}
	if (r->peer_loss_known)
		add(buf, len, "%sthe peer reports %.1f %%", sep,
		    r->peer_loss_ppm / 1e4);
	else
		add(buf, len, "%sno loss report from the peer: FEC is not in use",
		    sep);
	if (r->has_rebuilt)
		add(buf, len, "; FEC rebuilt %" PRIu64, r->rebuilt);
	if (!loss_seen(r))
		return;
	if (r->policing == POLICING_PER_CONN)
		add(buf, len, "; repairs do not rebuild what a policer drops");
	else if (r->fec.mode == FTV_FEC_OFF)
		add(buf, len, "; fec is off");
}

static void loss_verdicts(struct probe_report *r)
{
	struct probe_verdict *v;

	/* What fell short of the pad is loss where nothing else explains it. */
	r->pad_loss_known = r->one.granted &&
			    (r->policing == POLICING_NONE ||
			     r->policing == POLICING_UNCLEAR);
	r->pad_loss_ppm = r->pad_loss_known ?
			  pad_loss_ppm(r->one.granted, pad_total(&r->one),
				       r->mtu) : 0;
	if (!loss_seen(r))
		return;
	r->rec_fec = r->fec.mode == FTV_FEC_OFF &&
		     r->policing != POLICING_PER_CONN;
	v = verdict(r, PROBE_V_LOSS);
	if (v)
		loss_evidence(r, v->evidence, sizeof(v->evidence));
}

/* Of the reach step's joins to the current endpoint (@current) or to the
 * others: how many went, and how many came up.
 */
static unsigned int reach_count(const struct probe_report *r, bool current,
				unsigned int *up)
{
	unsigned int i, n = 0;

	*up = 0;
	for (i = 0; i < r->n_reach; i++) {
		if (r->reach[i].current != current)
			continue;
		n++;
		*up += r->reach[i].up;
	}
	return n;
}

/* The first join of the reach step that came up, or NULL. */
static const struct reach_result *reach_first_up(const struct probe_report *r)
{
	unsigned int i;

	for (i = 0; i < r->n_reach; i++)
		if (r->reach[i].up)
			return &r->reach[i];
	return NULL;
}

/* The endpoints of the list, in its order, that a join reached. */
static void reach_list(struct probe_report *r)
{
	unsigned int i;

	r->rec_list.count = 0;
	for (i = 0; i < r->n_reach; i++)
		if (r->reach[i].up && !r->reach[i].current)
			r->rec_list.ep[r->rec_list.count++] = r->reach[i].ep;
	r->rec_endpoints = r->rec_list.count > 0;
}

static void port_verdict(struct probe_report *r, unsigned int tried)
{
	const struct reach_result *up = reach_first_up(r);
	char ep[ENDPOINT_STRLEN];
	struct probe_verdict *v;

	reach_list(r);
	if (!r->rec_endpoints) {
		r->rec_flows = r->flows > 1;
		r->rec_flows_n = 1;
		r->rec_rotate = r->rotate != FTV_ROTATE_OFF;
		r->rec_rotate_n = FTV_ROTATE_OFF;
	}
	v = verdict(r, PROBE_V_PORT);
	if (!v)
		return;
	endpoint_to_string(ep, &r->endpoint);
	add(v->evidence, sizeof(v->evidence),
	    "%u joins from fresh source ports to %s got no answer in %.1f s, while the session's connection answered in %u ms",
	    tried, ep, PROBE_REACH_WAIT, r->answer_ms);
	if (up) {
		endpoint_to_string(ep, &up->ep);
		add(v->evidence, sizeof(v->evidence),
		    "; one to %s came up in %u ms", ep, up->ms);
	} else {
		add(v->evidence, sizeof(v->evidence),
		    "; %s: a new session needs a new connection too",
		    r->endpoints.count > 1 ? "no other endpoint came up" :
		    "the peer has no other endpoint");
	}
}

static void endpoint_verdict(struct probe_report *r)
{
	const struct reach_result *up = reach_first_up(r);
	char ep[ENDPOINT_STRLEN];
	struct probe_verdict *v = NULL;
	const char *sep = "a join to ";
	unsigned int i;

	for (i = 0; i < r->n_reach; i++) {
		if (r->reach[i].current || r->reach[i].up)
			continue;
		if (!v)
			v = verdict(r, PROBE_V_ENDPOINT);
		if (!v)
			return;
		endpoint_to_string(ep, &r->reach[i].ep);
		add(v->evidence, sizeof(v->evidence), "%s%s", sep, ep);
		sep = ", ";
	}
	if (!v)
		return;
	endpoint_to_string(ep, &up->ep);
	add(v->evidence, sizeof(v->evidence),
	    " got no answer in %.1f s, where one to %s came up in %u ms",
	    PROBE_REACH_WAIT, ep, up->ms);
}

/* Of the reach step's fresh-port joins that opened as @shape says: how
 * many went, and how many came up; *ms, the first to come up's time.
 */
static unsigned int openings_count(const struct probe_report *r,
				   enum probe_shape shape, unsigned int *up,
				   unsigned int *ms)
{
	unsigned int i, n = 0;

	*up = 0;
	*ms = 0;
	for (i = 0; i < r->n_reach; i++) {
		if (!r->reach[i].current || r->reach[i].shape != shape)
			continue;
		n++;
		if (r->reach[i].up && !(*up)++)
			*ms = r->reach[i].ms;
	}
	return n;
}

/*
 * Joins opened shaped came up and those opened as they are did not, or
 * the other way round: something on the path judges a connection by its
 * first message. The device's shape setting that passes is recommended
 * where it differs.
 */
static void openings_verdict(struct probe_report *r)
{
	unsigned int on, on_up, on_ms, off, off_up, off_ms;
	struct probe_verdict *v;
	bool want;

	on = openings_count(r, PROBE_SHAPE_ON, &on_up, &on_ms);
	off = openings_count(r, PROBE_SHAPE_OFF, &off_up, &off_ms);
	if (on < PROBE_REACH_FRESH || off < PROBE_REACH_FRESH ||
	    !on_up == !off_up)
		return;
	want = on_up;
	v = verdict(r, PROBE_V_OPENINGS);
	if (!v)
		return;
	add(v->evidence, sizeof(v->evidence),
	    "%u of %u joins whose first message went %s came up (the first in %u ms); none of %u whose first went %s did in %.1f s",
	    want ? on_up : off_up, want ? on : off,
	    want ? "shaped" : "as it is", want ? on_ms : off_ms,
	    want ? off : on, want ? "as it is" : "shaped", PROBE_REACH_WAIT);
	if (r->shape_known && r->shape == want)
		add(v->evidence, sizeof(v->evidence),
		    "; this end's shape is %s already", want ? "on" : "off");
	r->rec_shape = r->shape_known && r->shape != want;
	r->rec_shape_on = want;
}

static void reach_verdicts(struct probe_report *r)
{
	unsigned int tried, up, others, others_up;

	r->rec_endpoints = false;
	if (!r->n_reach)
		return;
	tried = reach_count(r, true, &up);
	others = reach_count(r, false, &others_up);
	if (tried >= PROBE_REACH_FRESH && !up)
		port_verdict(r, tried);
	else
		openings_verdict(r);
	if (others > others_up && (up || others_up))
		endpoint_verdict(r);
}

void probe_judge(struct probe_report *r)
{
	struct probe_verdict *v;

	r->n_verdicts = 0;
	r->rec_flows = r->rec_fec = r->rec_flows_at_peer = false;
	r->rec_flows_n = 0;
	r->rec_mtu = false;
	r->rec_mtu_n = 0;
	r->rec_rotate = false;
	r->rec_rotate_n = 0;
	r->rec_shape = r->rec_shape_on = false;
	r->pad_loss_known = false;
	r->pad_loss_ppm = 0;
	r->policing = POLICING_NOT_MEASURED;
	if (!r->answered)
		return;
	if (r->conns_measured)
		silent_verdicts(r);
	mtu_verdicts(r);
	freeze_verdicts(r);
	if (r->resets_measured && (r->rst || r->fin || r->has_there)) {
		v = verdict(r, PROBE_V_RESETS);
		if (v)
			resets_evidence(r, v->evidence, sizeof(v->evidence));
	}
	policing_verdicts(r);
	loss_verdicts(r);
	reach_verdicts(r);
}

size_t probe_recommended(const struct probe_report *r, char *buf, size_t len)
{
	if (!len)
		return 0;
	buf[0] = '\0';
	if (r->rec_flows)
		add(buf, len, "flows %u", r->rec_flows_n);
	if (r->rec_fec)
		add(buf, len, "%sfec auto", buf[0] ? " " : "");
	if (r->rec_rotate && r->rec_rotate_n == FTV_ROTATE_OFF)
		add(buf, len, "%srotate off", buf[0] ? " " : "");
	else if (r->rec_rotate && r->rec_rotate_n % 1024 == 0)
		add(buf, len, "%srotate %uk", buf[0] ? " " : "",
		    r->rec_rotate_n / 1024);
	else if (r->rec_rotate)
		add(buf, len, "%srotate %u", buf[0] ? " " : "", r->rec_rotate_n);
	if (r->rec_endpoints) {
		char ep[ENDPOINT_STRLEN];
		unsigned int i;

		add(buf, len, "%sendpoint ", buf[0] ? " " : "");
		for (i = 0; i < r->rec_list.count; i++) {
			endpoint_to_string(ep, &r->rec_list.ep[i]);
			add(buf, len, "%s%s", i ? "," : "", ep);
		}
	}
	return strlen(buf);
}

/* ---- text --------------------------------------------------------------- */

static const struct probe_verdict *find_verdict(const struct probe_report *r,
						const char *name)
{
	unsigned int i;

	for (i = 0; i < r->n_verdicts; i++)
		if (!strcmp(r->verdicts[i].name, name))
			return &r->verdicts[i];
	return NULL;
}

static void print_answer(const struct probe_report *r)
{
	if (r->answered)
		printf("answer: the peer answered in %u ms (connection %u)\n",
		       r->answer_ms, r->answer_index);
	else
		printf("answer: none: the peer's module cannot be probed\n");
}

/* "0 in 23 ms, 1 in 21 ms", those that answered */
static void print_answered(const struct probe_report *r)
{
	const char *sep = "";
	unsigned int i;

	for (i = 0; i < r->n_conns; i++) {
		if (!r->conns[i].answered)
			continue;
		printf("%s%u in %u ms", sep, r->conns[i].index, r->conns[i].ms);
		sep = ", ";
	}
}

static void print_conns(const struct probe_report *r)
{
	unsigned int i, silent = 0;
	const char *sep = "";

	if (!r->conns_measured) {
		printf("connections: not measured (--quick); %u up:", r->n_conns);
		for (i = 0; i < r->n_conns; i++)
			printf("%s %u", i ? "," : "", r->conns[i].index);
		printf("\n");
		return;
	}
	for (i = 0; i < r->n_conns; i++)
		silent += r->conns[i].measured && !r->conns[i].answered;
	if (!silent) {
		if (r->n_conns == 1)
			printf("connections: not seen (the one up answered: ");
		else
			printf("connections: not seen (each of the %u up answered: ",
			       r->n_conns);
		print_answered(r);
		printf(")\n");
		return;
	}
	printf("connections: connection%s", silent == 1 ? "" : "s");
	for (i = 0; i < r->n_conns; i++) {
		if (!r->conns[i].measured || r->conns[i].answered)
			continue;
		printf("%s %u", sep, r->conns[i].index);
		sep = ",";
	}
	printf(" %s not answer (no answer within 1 s; ",
	       silent == 1 ? "does" : "do");
	print_answered(r);
	printf(")\n");
}

static void print_mtu(const struct probe_report *r)
{
	const struct probe_verdict *v;

	if (!r->mtu_measured) {
		printf("path MTU: not measured (%s)\n",
		       !r->conns_measured ? "--quick" :
		       !r->mtu ? "the device's MTU is unknown" : "out of time");
		return;
	}
	if (!r->mtu_lost) {
		printf("path MTU: not seen (an echo of %u bytes, the device's MTU, came)\n",
		       r->mtu_fits);
		return;
	}
	if (!r->mtu_fits) {
		printf("path MTU: not measured (echoes of %u bytes lost, and of %u too)\n",
		       r->mtu_lost, PROBE_MTU_MIN);
		return;
	}
	v = find_verdict(r, mtu_icmp(r) ? PROBE_V_MTU_LOW : PROBE_V_MTU_HOLE);
	if (v)
		printf("path MTU: %s (%s)\n", v->name, v->evidence);
}

static void print_freeze(const struct probe_report *r)
{
	const struct probe_verdict *v = find_verdict(r, PROBE_V_FREEZE);
	char buf[320] = "";

	if (v) {
		printf("freeze: %s (%s)\n", v->name, v->evidence);
		return;
	}
	if (!r->n_freeze) {
		printf("freeze: not measured, %s\n",
		       !r->conns_measured ? "--quick" :
		       r->freeze_why ? r->freeze_why : "not run");
		return;
	}
	freeze_evidence(r, buf, sizeof(buf));
	printf("freeze: not seen (%s)\n", buf);
}

static void print_resets(const struct probe_report *r)
{
	const struct probe_verdict *v = find_verdict(r, PROBE_V_RESETS);

	if (v)
		printf("resets: %s (%s)\n", v->name, v->evidence);
	else
		printf("resets: not seen (no RST or FIN at this end, none at the peer)\n");
}

static void print_policing(const struct probe_report *r)
{
	const struct probe_verdict *v;
	char buf[320] = "";

	switch (r->policing) {
	case POLICING_NOT_MEASURED:
		printf("policing: not measured, %s\n",
		       r->not_measured ? r->not_measured : "not run");
		return;
	case POLICING_NONE:
		if (r->pad_loss_ppm)
			printf("policing: not seen (no rate limit up to %u Mbit/s: one connection brought %.1f %% of the pad, at %u kbit/s)\n",
			       PROBE_PAD_KBIT / 1000,
			       (1000000 - r->pad_loss_ppm) / 1e4,
			       pad_kbit(pad_total(&r->one), r->one.seconds));
		else
			printf("policing: not seen (no rate limit up to %u Mbit/s: one connection brought all the pad, at %u kbit/s)\n",
			       PROBE_PAD_KBIT / 1000,
			       pad_kbit(pad_total(&r->one), r->one.seconds));
		return;
	case POLICING_UNCLEAR:
		pads_evidence(r, buf, sizeof(buf));
		printf("policing: not seen, no clear pattern (%s)\n", buf);
		return;
	case POLICING_PER_CONN:
	case POLICING_SHARED:
		v = find_verdict(r, r->policing == POLICING_PER_CONN ?
				 PROBE_V_PER_CONN : PROBE_V_SHARED);
		if (v)
			printf("policing: %s (%s)\n", v->name, v->evidence);
		return;
	}
}

static void print_loss(const struct probe_report *r)
{
	const struct probe_verdict *v = find_verdict(r, PROBE_V_LOSS);
	uint32_t ppm = 0;
	char buf[320];

	if (!r->loss_measured || (!r->pad_loss_known && !r->peer_loss_known)) {
		loss_evidence(r, buf, sizeof(buf));
		printf("loss: not measured (%s)\n", buf);
		return;
	}
	if (!v) {
		loss_evidence(r, buf, sizeof(buf));
		printf("loss: not seen (%s)\n", buf);
		return;
	}
	if (r->pad_loss_known)
		ppm = r->pad_loss_ppm;
	if (r->peer_loss_known && r->peer_loss_ppm > ppm)
		ppm = r->peer_loss_ppm;
	printf("loss: %.1f %% lost (%s)\n", ppm / 1e4, v->evidence);
}

/* "198.51.100.2:51820 up in 41 ms" for each join of the reach step */
static void reach_evidence(const struct probe_report *r, char *buf,
			   size_t len)
{
	char ep[ENDPOINT_STRLEN];
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < r->n_reach; i++) {
		endpoint_to_string(ep, &r->reach[i].ep);
		add(buf, len, "%s%s%s ", i ? ", " : "", ep,
		    !r->reach[i].current ? "" :
		    r->reach[i].shape == PROBE_SHAPE_ON ? " (fresh port, shaped)" :
		    r->reach[i].shape == PROBE_SHAPE_OFF ?
		    " (fresh port, as it is)" : " (fresh port)");
		if (r->reach[i].up)
			add(buf, len, "up in %u ms", r->reach[i].ms);
		else
			add(buf, len, "no answer in %.1f s", PROBE_REACH_WAIT);
	}
}

static void print_openings(const struct probe_report *r)
{
	const struct probe_verdict *v = find_verdict(r, PROBE_V_OPENINGS);
	unsigned int on, on_up, off, off_up, ms;

	if (v) {
		printf("openings: %s (%s)\n", v->name, v->evidence);
		return;
	}
	if (r->openings_why) {
		printf("openings: not measured, %s\n", r->openings_why);
		return;
	}
	on = openings_count(r, PROBE_SHAPE_ON, &on_up, &ms);
	off = openings_count(r, PROBE_SHAPE_OFF, &off_up, &ms);
	if (on && off && on_up && off_up)
		printf("openings: not filtered (shaped: %u of %u came up; as they are: %u of %u)\n",
		       on_up, on, off_up, off);
	else
		printf("openings: not measured, no fresh-port join came up\n");
}

static void print_reach(const struct probe_report *r)
{
	const struct probe_verdict *port = find_verdict(r, PROBE_V_PORT);
	const struct probe_verdict *ep = find_verdict(r, PROBE_V_ENDPOINT);
	char buf[480];

	if (!r->n_reach) {
		printf("reach: not measured, %s\n",
		       r->reach_why ? r->reach_why : "not run");
		return;
	}
	if (port)
		printf("reach: %s (%s)\n", port->name, port->evidence);
	if (ep)
		printf("reach: %s (%s)\n", ep->name, ep->evidence);
	if (!port && !ep) {
		reach_evidence(r, buf, sizeof(buf));
		printf("reach: not seen (%s)\n", buf);
	}
	print_openings(r);
}

/* "about 1.7 MB", in the decimal units of the run's limit */
static void print_size(uint64_t bytes)
{
	if (bytes < 1000)
		printf("%" PRIu64 " bytes", bytes);
	else if (bytes < 1000000)
		printf("about %" PRIu64 " kB", (bytes + 500) / 1000);
	else
		printf("about %.1f MB", bytes / 1e6);
}

static void print_end(const struct probe_report *r)
{
	char args[PROBE_ARGS_LEN], key[KEY_B64_LEN + 1], fec[FEC_STRLEN];
	char rotate[SETTING_STRLEN];

	printf("took %.1f s and ", r->seconds);
	print_size(r->bytes);
	printf("\n");
	if (r->rec_flows_at_peer) {
		key_to_base64(key, r->own_key);
		printf("recommended at the peer, which dials: ftvctl peer set <interface> %s flows %u\n",
		       r->has_own_key ? key : "<this end's public key>",
		       r->rec_flows_n);
	}
	key_to_base64(key, r->key);
	if (r->rec_mtu)
		printf("recommended: ip link set dev %s mtu %u\n", r->ifname,
		       r->rec_mtu_n);
	if (r->rec_shape)
		printf("recommended: ftvctl set %s shape %s\n", r->ifname,
		       r->rec_shape_on ? "on" : "off");
	if (probe_recommended(r, args, sizeof(args))) {
		printf("recommended: ftvctl peer set %s %s %s\n", r->ifname, key,
		       args);
		return;
	}
	if (r->rec_mtu || r->rec_shape)
		return;
	fec_to_string(fec, r->fec);
	setting_number_format(setting_number_of(FTV_PEER_A_ROTATE), rotate,
			      r->rotate);
	printf("%s; keep: flows %u, fec %s, rotate %s\n",
	       r->n_verdicts ? "no setting here answers what was found" :
	       "nothing found", r->flows, fec, rotate);
}

void probe_print_part(const struct probe_report *r, enum probe_part part)
{
	switch (part) {
	case PROBE_PART_ANSWER:
		print_answer(r);
		break;
	case PROBE_PART_CONNS:
		print_conns(r);
		break;
	case PROBE_PART_MTU:
		print_mtu(r);
		break;
	case PROBE_PART_FREEZE:
		print_freeze(r);
		break;
	case PROBE_PART_RESETS:
		print_resets(r);
		break;
	case PROBE_PART_POLICING:
		print_policing(r);
		break;
	case PROBE_PART_LOSS:
		print_loss(r);
		break;
	case PROBE_PART_REACH:
		print_reach(r);
		break;
	case PROBE_PART_END:
		print_end(r);
		break;
	}
}

void probe_print_text(const struct probe_report *r)
{
	probe_print_part(r, PROBE_PART_ANSWER);
	if (!r->answered)
		return;
	probe_print_part(r, PROBE_PART_CONNS);
	probe_print_part(r, PROBE_PART_MTU);
	probe_print_part(r, PROBE_PART_FREEZE);
	probe_print_part(r, PROBE_PART_RESETS);
	probe_print_part(r, PROBE_PART_POLICING);
	probe_print_part(r, PROBE_PART_LOSS);
	probe_print_part(r, PROBE_PART_REACH);
	probe_print_part(r, PROBE_PART_END);
}

/* ---- JSON --------------------------------------------------------------- */

/* @s quoted, with '"', '\\' and control characters escaped */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_u64_or_null(bool has, uint64_t v)
{
	if (has)
		printf("%" PRIu64, v);
	else
		printf("null");
}

static void json_resets(const struct resets *rs, bool has)
{
	if (!has) {
		printf("null");
		return;
	}
	printf("{\"ttl\": %u, \"ip_id\": ", rs->ttl);
	json_u64_or_null(rs->has_ip_id, rs->ip_id);
	printf(", \"peer_ttl\": ");
	json_u64_or_null(rs->has_peer_ttl, rs->peer_ttl);
	printf(", \"peer_ip_id\": ");
	json_u64_or_null(rs->has_peer_ip_id, rs->peer_ip_id);
	printf("}");
}

static void json_pad(const struct pad_result *pad, bool ran)
{
	unsigned int i;

	if (!ran) {
		printf("null");
		return;
	}
	printf("{\"granted\": %u, \"came\": %" PRIu64 ", \"seconds\": %.3f, \"kbit_s\": %u, \"connections\": [",
	       pad->granted, pad_total(pad), pad->seconds,
	       pad_kbit(pad_total(pad), pad->seconds));
	for (i = 0; i < pad->n; i++)
		printf("%s{\"index\": %u, \"came\": %" PRIu64 ", \"kbit_s\": %u}",
		       i ? ", " : "", pad->index[i], pad->came[i],
		       pad_kbit(pad->came[i], pad->seconds));
	printf("]}");
}

static void json_verdict_name(const struct probe_report *r, const char *name)
{
	if (find_verdict(r, name))
		json_string(name);
	else
		printf("null");
}

static void json_mtu(const struct probe_report *r)
{
	bool icmp = mtu_icmp(r);

	if (!r->mtu_measured) {
		printf("{\"verdict\": null, \"measured\": false, \"device\": ");
		json_u64_or_null(r->mtu, r->mtu);
		printf("}");
		return;
	}
	printf("{\"verdict\": ");
	json_verdict_name(r, icmp ? PROBE_V_MTU_LOW : PROBE_V_MTU_HOLE);
	printf(", \"measured\": true, \"device\": %u, \"fits\": ", r->mtu);
	json_u64_or_null(r->mtu_fits, r->mtu_fits);
	printf(", \"lost\": ");
	json_u64_or_null(r->mtu_lost, r->mtu_lost);
	printf(", \"route_mtu\": ");
	json_u64_or_null(r->route_mtu, r->route_mtu);
	printf(", \"icmp\": %s, \"asks\": %u}", icmp ? "true" : "false",
	       r->mtu_asks);
}

static void json_freeze(const struct probe_report *r)
{
	const struct freeze_result *f;
	unsigned int i;

	printf("{\"verdict\": ");
	json_verdict_name(r, PROBE_V_FREEZE);
	printf(", \"measured\": %s, \"why\": ", r->n_freeze ? "true" : "false");
	if (r->n_freeze)
		printf("null");
	else
		json_string(!r->conns_measured ? "--quick" :
			    r->freeze_why ? r->freeze_why : "not run");
	printf(", \"connections\": [");
	for (i = 0; i < r->n_freeze; i++) {
		f = &r->freeze[i];
		printf("%s{\"index\": %u, \"granted\": %u, \"came\": %" PRIu64 ", \"carried\": %" PRIu64 ", \"froze\": %s}",
		       i ? ", " : "", f->index, f->granted, f->came, f->carried,
		       f->froze ? "true" : "false");
	}
	printf("]}");
}

static void json_reach(const struct probe_report *r)
{
	char ep[ENDPOINT_STRLEN];
	unsigned int i;

	printf("{\"verdicts\": [");
	if (find_verdict(r, PROBE_V_PORT))
		json_string(PROBE_V_PORT);
	if (find_verdict(r, PROBE_V_ENDPOINT)) {
		if (find_verdict(r, PROBE_V_PORT))
			printf(", ");
		json_string(PROBE_V_ENDPOINT);
	}
	printf("], \"measured\": %s, \"why\": ", r->n_reach ? "true" : "false");
	if (r->n_reach)
		printf("null");
	else
		json_string(r->reach_why ? r->reach_why : "not run");
	printf(", \"joins\": [");
	for (i = 0; i < r->n_reach; i++) {
		endpoint_to_string(ep, &r->reach[i].ep);
		printf("%s{\"endpoint\": ", i ? ", " : "");
		json_string(ep);
		printf(", \"current\": %s, \"shaped\": %s, \"up\": %s, \"ms\": ",
		       r->reach[i].current ? "true" : "false",
		       r->reach[i].shape == PROBE_SHAPE_ON ? "true" :
		       r->reach[i].shape == PROBE_SHAPE_OFF ? "false" : "null",
		       r->reach[i].up ? "true" : "false");
		json_u64_or_null(r->reach[i].up, r->reach[i].ms);
		printf("}");
	}
	printf("]}");
}

static void json_openings(const struct probe_report *r)
{
	unsigned int on, on_up, off, off_up, ms;
	const char *why = NULL;

	on = openings_count(r, PROBE_SHAPE_ON, &on_up, &ms);
	off = openings_count(r, PROBE_SHAPE_OFF, &off_up, &ms);
	if (!r->n_reach)
		why = r->reach_why ? r->reach_why : "not run";
	else if (r->openings_why)
		why = r->openings_why;
	else if (!on_up && !off_up)
		why = "no fresh-port join came up";
	printf("{\"verdict\": ");
	json_verdict_name(r, PROBE_V_OPENINGS);
	printf(", \"measured\": %s, \"why\": ", why ? "false" : "true");
	if (why)
		json_string(why);
	else
		printf("null");
	printf(", \"shaped\": {\"tried\": %u, \"up\": %u}, \"as_is\": {\"tried\": %u, \"up\": %u}, \"device_shape\": %s}",
	       on, on_up, off, off_up,
	       !r->shape_known ? "null" : r->shape ? "true" : "false");
}

static void json_measurements(const struct probe_report *r)
{
	const char *why = NULL;
	char buf[320];

	if (!r->answered) {
		printf("{\"resets\": null, \"policing\": null, \"loss\": null, \"mtu\": null, \"freeze\": null, \"reach\": null, \"openings\": null}");
		return;
	}
	printf("{\n    \"resets\": {\"verdict\": ");
	json_verdict_name(r, PROBE_V_RESETS);
	printf(", \"rst\": %" PRIu64 ", \"fin\": %" PRIu64 ", \"here\": ",
	       r->rst, r->fin);
	json_resets(&r->here, r->has_here);
	printf(", \"at_peer\": ");
	json_resets(&r->there, r->has_there);
	printf("},\n    \"policing\": {\"verdict\": ");
	if (r->policing == POLICING_PER_CONN)
		json_verdict_name(r, PROBE_V_PER_CONN);
	else if (r->policing == POLICING_SHARED)
		json_verdict_name(r, PROBE_V_SHARED);
	else
		printf("null");
	if (r->policing == POLICING_NOT_MEASURED)
		why = r->not_measured ? r->not_measured : "not run";
	else if (r->policing == POLICING_NONE)
		why = "no rate limit seen up to 8 Mbit/s";
	else if (r->policing == POLICING_UNCLEAR)
		why = "no clear pattern";
	printf(", \"measured\": %s, \"why\": ",
	       r->policing == POLICING_NOT_MEASURED ? "false" : "true");
	if (why)
		json_string(why);
	else
		printf("null");
	printf(", \"one\": ");
	json_pad(&r->one, r->one.granted);
	printf(", \"all\": ");
	json_pad(&r->all, r->all.n);
	printf("},\n    \"loss\": {\"verdict\": ");
	json_verdict_name(r, PROBE_V_LOSS);
	printf(", \"pad_ppm\": ");
	json_u64_or_null(r->pad_loss_known, r->pad_loss_ppm);
	printf(", \"peer_ppm\": ");
	json_u64_or_null(r->peer_loss_known, r->peer_loss_ppm);
	printf(", \"rebuilt\": ");
	json_u64_or_null(r->has_rebuilt, r->rebuilt);
	printf(", \"evidence\": ");
	loss_evidence(r, buf, sizeof(buf));
	json_string(buf);
	printf("},\n    \"mtu\": ");
	json_mtu(r);
	printf(",\n    \"freeze\": ");
	json_freeze(r);
	printf(",\n    \"reach\": ");
	json_reach(r);
	printf(",\n    \"openings\": ");
	json_openings(r);
	printf("\n  }");
}

void probe_print_json(const struct probe_report *r)
{
	char key[KEY_B64_LEN + 1], args[PROBE_ARGS_LEN];
	unsigned int i;

	key_to_base64(key, r->key);
	printf("{\n  \"interface\": ");
	json_string(r->ifname);
	printf(",\n  \"peer\": \"%s\",\n  \"answered\": %s,\n  \"connections\": [",
	       key, r->answered ? "true" : "false");
	for (i = 0; i < r->n_conns; i++) {
		printf("%s{\"index\": %u, \"answered\": %s, \"rx_bytes\": %" PRIu64 "}",
		       i ? ", " : "", r->conns[i].index,
		       !r->conns[i].measured ? "null" :
		       r->conns[i].answered ? "true" : "false",
		       r->conns[i].rx_bytes);
	}
	printf("],\n  \"measurements\": ");
	json_measurements(r);
	printf(",\n  \"verdicts\": [");
	for (i = 0; i < r->n_verdicts; i++) {
		printf("%s{\"name\": ", i ? ", " : "");
		json_string(r->verdicts[i].name);
		printf(", \"evidence\": ");
		json_string(r->verdicts[i].evidence);
		printf("}");
	}
	printf("],\n  \"recommended\": ");
	if (probe_recommended(r, args, sizeof(args)))
		json_string(args);
	else
		printf("null");
	printf(",\n  \"recommended_mtu\": ");
	json_u64_or_null(r->rec_mtu, r->rec_mtu_n);
	printf(",\n  \"recommended_shape\": %s",
	       !r->rec_shape ? "null" : r->rec_shape_on ? "\"on\"" : "\"off\"");
	printf(",\n  \"seconds\": %.1f,\n  \"bytes\": %" PRIu64 "\n}\n",
	       r->seconds, r->bytes);
}

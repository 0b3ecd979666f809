// SPDX-License-Identifier: GPL-2.0
/*
 * Offline tests of probe: its verdict rules (probe-judge.c) fed made-up
 * paths, as the numbers a run would measure on them, and the steps
 * (probe.c, included whole) run against a make-believe kernel and peer in
 * place of the netlink layer. No kernel is needed.
 *
 *   probe-test                 run the checks, print KTAP, exit 0 if all pass
 *   probe-test --text PATH     print `probe`'s report of a made-up path
 *   probe-test --json PATH     the same as `probe --json`
 *   probe-test --run PEER [probe's options]
 *                              run `ftvctl probe ftv0 KEY` against a
 *                              simulated peer and path, in real time
 *
 * PATH is one of the names in paths[] below (clean, policed, ...), PEER
 * one of sims[] (clean, policed, lossy, ...).
 */
#include "../probe.c"

#include <sodium.h>

static int failures, tests;

static void check(bool ok, const char *what)
{
	tests++;
	if (!ok)
		failures++;
	printf("%sok %d %s\n", ok ? "" : "not ", tests, what);
}

/* @n connections numbered from 0, each answering, FEC auto and no loss */
static void report_init(struct probe_report *r, unsigned int n, uint8_t flows)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	strcpy(r->ifname, "ftv0");
	for (i = 0; i < FTV_KEY_LEN; i++) {
		r->key[i] = i + 1;
		r->own_key[i] = i + 100;
	}
	r->has_own_key = true;
	r->flows = flows;
	r->fec = FEC_DEFAULT;
	r->rotate = ROTATE_DEFAULT;
	r->dials = true;
	r->answered = true;
	r->answer_ms = 23;
	r->conns_measured = true;
	r->n_conns = n;
	for (i = 0; i < n; i++) {
		r->conns[i].index = i;
		r->conns[i].rx_bytes = 100000 * (i + 1);
		r->conns[i].measured = r->conns[i].answered = true;
		r->conns[i].ms = 23 + i;
	}
	r->mtu_measured = true;
	r->mtu_fits = 1420;
	r->route_mtu = 1500;
	r->outer_overhead = 76;
	r->mtu_asks = 1;
	if (n > 1) {
		r->n_freeze = 1;
		r->freeze[0] = (struct freeze_result){ .index = 1,
			.granted = PROBE_FREEZE_BYTES, .came = 508450,
			.carried = 520000 };
	} else {
		r->freeze_why = "the session has one connection (flows 1)";
	}
	r->resets_measured = true;
	r->mtu = 1420;
	r->loss_measured = true;
	r->peer_loss_known = true;
	r->has_rebuilt = true;
	r->seconds = 4.2;
	r->bytes = 1090000;
}

/* A pad of PROBE_PAD_BYTES over @n connections, @came on each. */
static void pad_set(struct pad_result *pad, double seconds, unsigned int n,
		    const uint64_t *came)
{
	unsigned int i;

	pad->granted = PROBE_PAD_BYTES;
	pad->seconds = seconds;
	pad->n = n;
	for (i = 0; i < n; i++) {
		pad->index[i] = i;
		pad->came[i] = came[i];
	}
}

/* ---- the paths ---------------------------------------------------------- */

/* Four connections, the pad whole (with its overhead) on the first. */
static void path_clean(struct probe_report *r)
{
	static const uint64_t one[] = { 1017200, 96, 96, 96 };

	report_init(r, 4, 4);
	pad_set(&r->one, 1.04, 4, one);
}

/*
 * Each connection policed at 2 Mbit/s (test_pathprobe_police.sh): one
 * brings a quarter and its burst, four bring it all, each a quarter.
 */
static void path_policed(struct probe_report *r)
{
	static const uint64_t one[] = { 281000, 96, 96, 96 };
	static const uint64_t all[] = { 262000, 259000, 266000, 258000 };

	report_init(r, 4, 2);
	pad_set(&r->one, 1.05, 4, one);
	pad_set(&r->all, 1.06, 4, all);
	r->fec.mode = FTV_FEC_OFF;
	r->peer_loss_ppm = 2100;
	r->bytes = 2140000;
}

/* The same policer, only two connections: twice what one brings. */
static void path_policed_two(struct probe_report *r)
{
	static const uint64_t one[] = { 281000, 96 };
	static const uint64_t all[] = { 276000, 279000 };

	report_init(r, 2, 2);
	pad_set(&r->one, 1.05, 2, one);
	pad_set(&r->all, 1.05, 2, all);
}

/* 4 Mbit/s for the whole path: four bring what one does. */
static void path_shared(struct probe_report *r)
{
	static const uint64_t one[] = { 508000, 96, 96, 96 };
	static const uint64_t all[] = { 131000, 128000, 129000, 130000 };

	report_init(r, 4, 4);
	pad_set(&r->one, 1.02, 4, one);
	pad_set(&r->all, 1.03, 4, all);
}

/* 4 % lost at random, FEC off: the pad comes short, nothing rebuilds. */
static void path_loss(struct probe_report *r)
{
	static const uint64_t one[] = { 975000, 96 };

	report_init(r, 2, 2);
	pad_set(&r->one, 1.02, 2, one);
	r->fec.mode = FTV_FEC_OFF;
	r->peer_loss_known = false;
}

/* Injected resets at both ends; connection 2 does not answer. */
static void path_hostile(struct probe_report *r)
{
	static const uint64_t one[] = { 1017200, 96, 96, 96 };

	report_init(r, 4, 4);
	pad_set(&r->one, 1.04, 4, one);
	r->conns[2].answered = false;
	r->rst = 3;
	r->fin = 1;
	r->has_here = true;
	r->here = (struct resets){ .ttl = 40, .ip_id = 4242, .peer_ttl = 63,
				   .peer_ip_id = 17, .has_ip_id = true,
				   .has_peer_ttl = true,
				   .has_peer_ip_id = true };
	r->has_there = true;
	r->there = (struct resets){ .ttl = 61, .peer_ttl = 61,
				    .has_peer_ttl = true };
}

/* One connection up, FEC reporting 0.8 % and rebuilding it. */
static void path_single(struct probe_report *r)
{
	report_init(r, 1, 1);
	r->conns_measured = false;
	r->conns[0].measured = r->conns[0].answered = false;
	r->not_measured = "the session has one connection (flows 1)";
	r->peer_loss_ppm = 8000;
	r->rebuilt = 56;
	r->bytes = 900;
	r->seconds = 0.1;
}

/* The peer's budget spent: the pad is answered with 0. */
static void path_spent(struct probe_report *r)
{
	report_init(r, 4, 4);
	r->not_measured = "the peer's probe budget is spent (try again in a minute)";
}

/* Policed, and this end only answers: flows is the peer's to set. */
static void path_policed_answering(struct probe_report *r)
{
	path_policed(r);
	r->dials = false;
}

/*
 * A 1280-byte link on the path (test_pathprobe_mtu.sh): echoes over
 * 1204 bytes lost, and no ICMP error lowered the route.
 */
static void path_mtu_hole(struct probe_report *r)
{
	path_clean(r);
	r->mtu_fits = 1200;
	r->mtu_lost = 1208;
	r->mtu_asks = 17;
}

/* The same with the ICMP errors let through. */
static void path_mtu_icmp(struct probe_report *r)
{
	path_mtu_hole(r);
	r->route_mtu = 1280;
}

/*
 * Each connection frozen once 16 KB went towards the client
 * (test_pathprobe_freeze.sh): three pads, each cut after what its
 * connection had room for.
 */
static void path_freeze(struct probe_report *r)
{
	unsigned int i;

	path_clean(r);
	r->n_freeze = 3;
	for (i = 0; i < 3; i++)
		r->freeze[i] = (struct freeze_result){ .index = i + 1,
			.granted = PROBE_FREEZE_BYTES, .came = 13000 - 500 * i,
			.carried = 15400 + 100 * i, .froze = true };
	r->policing = POLICING_NOT_MEASURED;
	r->not_measured = "a connection froze (a pad on the first would freeze it)";
	memset(&r->one, 0, sizeof(r->one));
}

/* @s, "a.b.c.d:port", into @ep */
static void ep_set(union endpoint *ep, const char *s)
{
	if (!parse_endpoint(ep, s))
		abort();
}

/* Four connections as clean, and the reach step's joins: two from
 * fresh source ports to 198.51.100.2:51820, the current endpoint (up
 * when @current_up), and with @list one to 198.51.100.3:51820 (up when
 * @other_up).
 */
static void reach_set(struct probe_report *r, bool list, bool current_up,
		      bool other_up)
{
	unsigned int i;

	path_clean(r);
	ep_set(&r->endpoint, "198.51.100.2:51820");
	if (list) {
		r->endpoints.count = 2;
		r->endpoints.ep[0] = r->endpoint;
		ep_set(&r->endpoints.ep[1], "198.51.100.3:51820");
	}
	for (i = 0; i < PROBE_REACH_FRESH; i++)
		r->reach[r->n_reach++] = (struct reach_result){
			.ep = r->endpoint, .current = true, .up = current_up,
			.ms = current_up ? 41 + i : 0 };
	if (list)
		r->reach[r->n_reach++] = (struct reach_result){
			.ep = r->endpoints.ep[1], .up = other_up,
			.ms = other_up ? 44 : 0 };
}

static void path_port(struct probe_report *r)
{
	reach_set(r, false, false, false);
}

static void path_port_list(struct probe_report *r)
{
	reach_set(r, true, false, true);
}

static void path_endpoint(struct probe_report *r)
{
	reach_set(r, true, true, false);
}

/* Clean, and the reach step's fresh-port joins: two opened shaped (up
 * when @on_up) and two as they are (up when @off_up), from a device
 * whose shape setting is @shape.
 */
static void openings_set(struct probe_report *r, bool on_up, bool off_up,
			 bool shape)
{
	unsigned int i;
	bool up;

	path_clean(r);
	ep_set(&r->endpoint, "198.51.100.2:51820");
	r->shape_known = true;
	r->shape = shape;
	for (i = 0; i < 2 * PROBE_REACH_FRESH; i++) {
		up = i % 2 ? off_up : on_up;
		r->reach[r->n_reach++] = (struct reach_result){
			.ep = r->endpoint, .current = true, .up = up,
			.shape = i % 2 ? PROBE_SHAPE_OFF : PROBE_SHAPE_ON,
			.ms = up ? 41 + i : 0 };
	}
}

static void path_openings(struct probe_report *r)
{
	openings_set(r, true, false, false);
}

static const struct {
	const char *name;
	void (*fill)(struct probe_report *r);
} paths[] = {
	{ "clean", path_clean },
	{ "policed", path_policed },
	{ "policed-two", path_policed_two },
	{ "shared", path_shared },
	{ "loss", path_loss },
	{ "hostile", path_hostile },
	{ "single", path_single },
	{ "spent", path_spent },
	{ "policed-answering", path_policed_answering },
	{ "mtu-hole", path_mtu_hole },
	{ "mtu-icmp", path_mtu_icmp },
	{ "freeze", path_freeze },
	{ "port", path_port },
	{ "port-list", path_port_list },
	{ "endpoint", path_endpoint },
	{ "openings", path_openings },
};

#define PATH_COUNT (sizeof(paths) / sizeof(paths[0]))

/* ---- the checks --------------------------------------------------------- */

static bool has(const struct probe_report *r, const char *name)
{
	unsigned int i;

	for (i = 0; i < r->n_verdicts; i++)
		if (!strcmp(r->verdicts[i].name, name))
			return true;
	return false;
}

static bool recommends(const struct probe_report *r, const char *args)
{
	char buf[PROBE_ARGS_LEN];

	probe_recommended(r, buf, sizeof(buf));
	if (strcmp(buf, args))
		printf("# recommended \"%s\", not \"%s\"\n", buf, args);
	return !strcmp(buf, args);
}

static void test_rules(void)
{
	struct pad_result one = { 0 }, all = { 0 };
	static const uint64_t whole[] = { 900000 }, short_one[] = { 899999 };
	static const uint64_t four[] = { 187500, 187500, 187500, 187500 };
	static const uint64_t uneven[] = { 250000, 250000, 250000, 120000 };

	pad_set(&one, 1, 1, whole);
	check(pad_whole(&one) && judge_policing(&one, NULL) == POLICING_NONE,
	      "rule: 90 % on one connection is no limit");
	pad_set(&one, 1, 1, short_one);
	check(!pad_whole(&one) && judge_policing(&one, NULL) == POLICING_UNCLEAR,
	      "rule: less, without a spread pad, is no clear pattern");
	one.came[0] = 300000;
	pad_set(&all, 1, 4, four);
	check(judge_policing(&one, &all) == POLICING_UNCLEAR,
	      "rule: four bringing 2.5 times one, each not within a third: no verdict");
	all.came[0] = all.came[1] = all.came[2] = all.came[3] = 200000;
	check(judge_policing(&one, &all) == POLICING_PER_CONN,
	      "rule: four bringing 2.67 times one, each within a third: per-connection");
	pad_set(&all, 1, 4, uneven);
	check(judge_policing(&one, &all) == POLICING_UNCLEAR,
	      "rule: one of the four far below one alone: no verdict");
	one.came[0] = 500000;
	all.came[0] = 150000;
	all.came[1] = all.came[2] = all.came[3] = 150000;
	check(judge_policing(&one, &all) == POLICING_SHARED,
	      "rule: four bringing 1.2 times one: shared bottleneck");
	all.came[3] = 150001;
	check(judge_policing(&one, &all) == POLICING_UNCLEAR,
	      "rule: a byte over 1.2 times one: no verdict");
	one.came[0] = 0;
	check(judge_policing(&one, &all) == POLICING_UNCLEAR,
	      "rule: nothing on one connection is no verdict");
	one.granted = 0;
	check(judge_policing(&one, &all) == POLICING_NOT_MEASURED,
	      "rule: a pad granted nothing is not measured");

	/* 705 messages of at most 1420 bytes, 24 bytes over each */
	check(pad_loss_ppm(PROBE_PAD_BYTES, 1016920, 1420) == 0 &&
	      pad_loss_ppm(PROBE_PAD_BYTES, 1030000, 1420) == 0 &&
	      pad_loss_ppm(PROBE_PAD_BYTES, 1016919, 1420) == 0 &&
	      pad_loss_ppm(PROBE_PAD_BYTES, 1016910, 1420) == 9,
	      "loss: a pad whole with its messages' overhead lost nothing");
	check(pad_loss_ppm(PROBE_PAD_BYTES, 1016920 - 10169, 1420) == 9999 ||
	      pad_loss_ppm(PROBE_PAD_BYTES, 1016920 - 10169, 1420) == 10000,
	      "loss: 1 % short is 10000 ppm");
	check(pad_loss_ppm(0, 0, 1420) == 0 &&
	      pad_loss_ppm(PROBE_PAD_BYTES, 0, 0) == 1000000,
	      "loss: nothing granted, nothing lost; nothing came, all lost");
	check(pad_kbit(1000000, 1.0) == 8000 && pad_kbit(1, 0) == 0,
	      "rate: bytes * 8 / seconds, in kbit/s");
}

static void test_openings(void)
{
	struct probe_report r;

	openings_set(&r, true, true, true);
	probe_judge(&r);
	check(!r.n_verdicts && !r.rec_shape,
	      "openings: shaped and as they are all up, no verdict");
	openings_set(&r, true, false, true);
	probe_judge(&r);
	check(has(&r, PROBE_V_OPENINGS) && r.n_verdicts == 1 && !r.rec_shape &&
	      recommends(&r, "") &&
	      !strcmp(r.verdicts[0].evidence,
		      "2 of 2 joins whose first message went shaped came up (the first in 41 ms); none of 2 whose first went as it is did in 2.5 s; this end's shape is on already"),
	      "openings filtered, shape on here: the verdict, nothing to change");
	openings_set(&r, true, false, false);
	probe_judge(&r);
	check(has(&r, PROBE_V_OPENINGS) && r.rec_shape && r.rec_shape_on &&
	      recommends(&r, ""),
	      "openings filtered, shape off here: shape on");
	openings_set(&r, false, true, true);
	probe_judge(&r);
	check(has(&r, PROBE_V_OPENINGS) && r.rec_shape && !r.rec_shape_on,
	      "shaped openings filtered, shape on here: shape off");
	openings_set(&r, true, false, false);
	r.reach[3].up = true;
	probe_judge(&r);
	check(!r.n_verdicts && !r.rec_shape,
	      "openings: one as it is of two up is no verdict");
	openings_set(&r, false, false, false);
	probe_judge(&r);
	check(has(&r, PROBE_V_PORT) && !has(&r, PROBE_V_OPENINGS) &&
	      !r.rec_shape,
	      "openings: none up at all is a blocked port, not a filter");
	openings_set(&r, true, false, false);
	r.n_reach = 3;
	probe_judge(&r);
	check(!r.n_verdicts, "openings: one as it is alone is no verdict");
}

/* The verdicts on what the pads measured: policers, a shared bottleneck, loss. */
static void test_paths_rates(void)
{
	struct probe_report r;

	path_clean(&r);
	probe_judge(&r);
	check(r.policing == POLICING_NONE && !r.n_verdicts && recommends(&r, ""),
	      "clean: no verdict, nothing recommended");
	check(r.pad_loss_known && r.pad_loss_ppm == 0,
	      "clean: the pad's overhead is no loss");

	path_policed(&r);
	probe_judge(&r);
	check(r.policing == POLICING_PER_CONN && has(&r, PROBE_V_PER_CONN) &&
	      r.n_verdicts == 1, "policed: per-connection policer, alone");
	check(recommends(&r, "flows 4"), "policed: flows 4, and no fec");
	check(!r.pad_loss_known, "policed: the pad's shortfall is no loss");
	r.peer_loss_ppm = 30000;
	probe_judge(&r);
	check(has(&r, PROBE_V_LOSS) && recommends(&r, "flows 4") &&
	      strstr(r.verdicts[1].evidence, "repairs do not rebuild"),
	      "policed with loss reported: loss, but fec is not recommended");
	r.flows = 8;
	probe_judge(&r);
	check(recommends(&r, "flows 8"), "policed: flows above 4 are kept");

	path_policed_two(&r);
	probe_judge(&r);
	check(r.policing == POLICING_PER_CONN && recommends(&r, "flows 4"),
	      "policed over two connections: twice one is enough");

	path_policed_answering(&r);
	probe_judge(&r);
	check(r.policing == POLICING_PER_CONN && r.rec_flows_at_peer &&
	      recommends(&r, ""),
	      "policed, this end only answers: flows goes to the peer");

	path_shared(&r);
	probe_judge(&r);
	check(r.policing == POLICING_SHARED && has(&r, PROBE_V_SHARED) &&
	      r.n_verdicts == 1 && recommends(&r, ""),
	      "shared bottleneck: the verdict, no setting for it");

	path_loss(&r);
	probe_judge(&r);
	check(r.policing == POLICING_NONE && has(&r, PROBE_V_LOSS) &&
	      r.n_verdicts == 1 && r.pad_loss_ppm > 40000 &&
	      r.pad_loss_ppm < 42000, "loss: 4.1 % of the pad, the verdict");
	check(recommends(&r, "fec auto"), "loss with fec off: fec auto");
	r.fec = FEC_DEFAULT;
	probe_judge(&r);
	check(has(&r, PROBE_V_LOSS) && recommends(&r, ""),
	      "loss with fec auto already: nothing to change");
}

/* The verdicts on connections that do not answer, injected resets, one connection, a spent budget. */
static void test_paths_hostile(void)
{
	struct probe_report r;

	path_hostile(&r);
	probe_judge(&r);
	check(has(&r, PROBE_V_SILENT) && has(&r, PROBE_V_RESETS) &&
	      r.n_verdicts == 2 && recommends(&r, ""),
	      "hostile: connection 2 does not answer, injected resets");
	check(strstr(r.verdicts[1].evidence,
		     "TTL 40 where the peer's segments come with 63: something on the path sent it") &&
	      strstr(r.verdicts[1].evidence,
		     "TTL 61, as this end's segments: most likely this end's host sent it"),
	      "hostile: each end's TTL evidence, read as troubleshooting.md does");

	path_single(&r);
	probe_judge(&r);
	check(r.policing == POLICING_NOT_MEASURED && has(&r, PROBE_V_LOSS) &&
	      r.n_verdicts == 1 && recommends(&r, ""),
	      "one connection: policing not measured; the peer's 0.8 % is loss");

	path_spent(&r);
	probe_judge(&r);
	check(r.policing == POLICING_NOT_MEASURED && !r.n_verdicts &&
	      recommends(&r, ""), "budget spent: nothing measured, nothing found");
}

/* The verdicts on the path MTU. */
static void test_paths_mtu(void)
{
	struct probe_report r;

	path_mtu_hole(&r);
	probe_judge(&r);
	check(has(&r, PROBE_V_MTU_HOLE) && r.n_verdicts == 1 && r.rec_mtu &&
	      r.rec_mtu_n == 1200 && recommends(&r, ""),
	      "path MTU black hole: the verdict, mtu 1200, no peer setting");
	check(strstr(r.verdicts[0].evidence, "(outer packets of 1284) were lost twice") &&
	      strstr(r.verdicts[0].evidence, "still 1500"),
	      "path MTU black hole: the lost length and the route's MTU");
	path_mtu_icmp(&r);
	probe_judge(&r);
	check(has(&r, PROBE_V_MTU_LOW) && r.n_verdicts == 1 && r.rec_mtu &&
	      r.rec_mtu_n == 1200,
	      "path MTU below the device's, ICMP lowered the route: the verdict, mtu 1200");
	r.route_mtu = 1284;
	probe_judge(&r);
	check(has(&r, PROBE_V_MTU_HOLE),
	      "a route MTU that fits the lost echo is no ICMP error");
	path_clean(&r);
	r.mtu_lost = 1420;
	r.mtu_fits = 0;
	probe_judge(&r);
	check(!r.n_verdicts && !r.rec_mtu,
	      "path MTU: nothing came, not even 576 bytes: no verdict");
}

/* The verdicts on connections frozen after so many bytes. */
static void test_paths_freeze(void)
{
	struct probe_report r;

	path_freeze(&r);
	probe_judge(&r);
	check(has(&r, PROBE_V_FREEZE) && r.n_verdicts == 1 &&
	      recommends(&r, "rotate 11k"),
	      "freeze: three alike after 15.4 KB, rotate at three quarters (11k)");
	r.freeze[2].carried = 40000;
	probe_judge(&r);
	check(!has(&r, PROBE_V_FREEZE) && recommends(&r, ""),
	      "freeze: carried more than twice the least: no verdict");
	r.n_freeze = 2;
	r.freeze[1].froze = false;
	r.freeze[1].came = 160000;
	probe_judge(&r);
	check(!has(&r, PROBE_V_FREEZE),
	      "freeze: one froze, the next was still bringing its pad: no verdict");
	path_freeze(&r);
	r.n_freeze = 2;
	r.freeze[0].carried = r.freeze[1].carried = 3000;
	probe_judge(&r);
	check(has(&r, PROBE_V_FREEZE) && recommends(&r, "rotate 4k"),
	      "freeze after 3 KB: rotate at its least, 4k");
	r.freeze[0].carried = r.freeze[1].carried = PROBE_FREEZE_MAX;
	probe_judge(&r);
	check(!has(&r, PROBE_V_FREEZE),
	      "freeze after 1 MB or more: no verdict");
}

/* The verdicts on joins to fresh ports and other endpoints. */
static void test_paths_reach(void)
{
	struct probe_report r;

	path_clean(&r);
	r.answered = false;
	probe_judge(&r);
	check(!r.n_verdicts && recommends(&r, ""), "no answer: no verdict");

	reach_set(&r, true, true, true);
	probe_judge(&r);
	check(!r.n_verdicts && recommends(&r, ""),
	      "reach: every join up, no verdict");
	path_port(&r);
	probe_judge(&r);
	check(has(&r, PROBE_V_PORT) && r.n_verdicts == 1 &&
	      recommends(&r, "flows 1 rotate off"),
	      "port blocked, no other endpoint: keep the connection (flows 1 rotate off)");
	check(strstr(r.verdicts[0].evidence,
		     "2 joins from fresh source ports to 198.51.100.2:51820 got no answer in 2.5 s, while the session's connection answered in 23 ms") != NULL,
	      "port blocked: the joins, the endpoint and the answer as evidence");
	r.flows = 1;
	r.rotate = FTV_ROTATE_OFF;
	probe_judge(&r);
	check(has(&r, PROBE_V_PORT) && recommends(&r, ""),
	      "port blocked with flows 1 rotate off already: nothing to change");
	path_port(&r);
	r.reach[1].up = true;
	probe_judge(&r);
	check(!r.n_verdicts, "port: one fresh port of two up is no verdict");
	path_port(&r);
	r.n_reach = 1;
	probe_judge(&r);
	check(!r.n_verdicts, "port: one join lost alone is no verdict");
	path_port_list(&r);
	probe_judge(&r);
	check(has(&r, PROBE_V_PORT) && !has(&r, PROBE_V_ENDPOINT) &&
	      recommends(&r, "endpoint 198.51.100.3:51820"),
	      "port blocked, another endpoint up: the endpoints that came up");
	path_endpoint(&r);
	probe_judge(&r);
	check(has(&r, PROBE_V_ENDPOINT) && r.n_verdicts == 1 &&
	      recommends(&r, "") &&
	      strstr(r.verdicts[0].evidence,
		     "a join to 198.51.100.3:51820 got no answer in 2.5 s, where one to 198.51.100.2:51820 came up in 41 ms"),
	      "endpoint blocked: another endpoint fails where the current works");
	path_freeze(&r);
	reach_set(&r, false, false, false);
	r.n_freeze = 3;
	r.freeze[0].froze = r.freeze[1].froze = true;
	r.freeze[0].carried = r.freeze[1].carried = 15400;
	r.freeze[0].came = r.freeze[1].came = 13000;
	r.not_measured = "a connection froze (a pad on the first would freeze it)";
	memset(&r.one, 0, sizeof(r.one));
	probe_judge(&r);
	check(has(&r, PROBE_V_FREEZE) && has(&r, PROBE_V_PORT) &&
	      recommends(&r, "flows 1 rotate off"),
	      "a freeze, and new connections blocked: no rotation");
}

static void test_paths(void)
{
	test_paths_rates();
	test_paths_hostile();
	test_paths_mtu();
	test_paths_freeze();
	test_paths_reach();
	test_openings();
}

/* ---- a simulated peer -------------------------------------------------- */

/*
 * The kernel and the peer behind ipc_probe(): connections numbered from
 * 0, answers that come 10 ms after an ask (on the connection it came on),
 * and padding sent at its rate and let through by the path's model.
 */
static struct sim {
	/* the path and the peer */
	unsigned int n;			/* connections up; 0: no session */
	bool mute;			/* a module without probes */
	int silent;			/* a connection whose answers are lost */
	unsigned int per_conn_kbit;	/* a policer on each connection */
	unsigned int shared_kbit;	/* a bottleneck for all */
	double loss;			/* lost at random */
	bool drop_answers;		/* every other answer while padding */
	unsigned int max_len;		/* longer echoes are lost; 0: none */
	uint32_t freeze_after;		/* towards this end, per connection */
	unsigned int route_mtu;		/* the kernel's route MTU; 0: 1500 */
	unsigned int mtu_set;		/* what --apply set */
	uint32_t budget;		/* padding the peer has left to give */
	uint8_t flows;
	struct fec fec;
	uint64_t rst;
	bool dials;
	bool port_blocked;		/* joins get no answer */
	bool plain_blocked;		/* joins opened as they are get none */
	bool shape_off;			/* the device's shape setting */
	bool shape_set, shape_on;	/* what --apply set */

	/* what the kernel holds */
	uint32_t nonce;
	bool told, pending;
	struct probe_tell tell, next;
	double next_at;
	uint64_t rx[PROBE_CONNS_MAX];
	uint64_t stream0;		/* each connection carried before */
	/* the pad under way */
	bool padding;
	uint32_t pad_index, granted, rate_kbit;
	double pad_t0;
	uint64_t pad_came[PROBE_CONNS_MAX];
	unsigned int asks;
	unsigned int joins;		/* opened by join steps */
	double join_at[PROBE_REACH_MAX];
	enum probe_shape join_shape[PROBE_REACH_MAX];
	bool applied;
	struct peer set;
} sim;

static uint32_t sim_sent(double t)
{
	double sent = t * sim.rate_kbit * 125.0;

	return sent >= sim.granted ? sim.granted : (uint32_t)sent;
}

/* What has come of the pad by now, connection by connection. */
static void sim_update(void)
{
	double t = now() - sim.pad_t0, arrived, total = 0, cap;
	uint32_t sent;
	unsigned int i, n = sim.pad_index == FTV_PROBE_INDEX_ALL ? sim.n : 1;
	double share[PROBE_CONNS_MAX] = { 0 };

	if (!sim.padding)
		return;
	/* A policer drops what is over its rate: it lets nothing more
	 * through once the padding ended.
	 */
	if (t > sim.granted / (sim.rate_kbit * 125.0))
		t = sim.granted / (sim.rate_kbit * 125.0);
	sent = sim_sent(t);
	for (i = 0; i < sim.n; i++) {
		if (n > 1)
			share[i] = sent / (double)n * (1 - sim.loss);
		else if (i == sim.pad_index)
			share[i] = sent * (1 - sim.loss);
		if (sim.per_conn_kbit) {
			cap = 32768 + t * sim.per_conn_kbit * 125.0;
			if (share[i] > cap)
				share[i] = cap;
		}
		total += share[i];
	}
	cap = 32768 + t * sim.shared_kbit * 125.0;
	for (i = 0; i < sim.n; i++) {
		arrived = share[i];
		if (sim.shared_kbit && total > cap)
			arrived = share[i] * cap / total;
		/* each message of padding 24 bytes longer in the segment */
		arrived += arrived * PROBE_MSG_OVERHEAD / 1420;
		/* a censor that lets so much through and nothing more */
		if (sim.freeze_after) {
			double room = (double)sim.freeze_after - sim.stream0 -
				      (double)(sim.rx[i] - sim.pad_came[i]);

			if (arrived > room)
				arrived = room > 0 ? room : 0;
		}
		if ((uint64_t)arrived > sim.pad_came[i]) {
			sim.rx[i] += (uint64_t)arrived - sim.pad_came[i];
			sim.pad_came[i] = (uint64_t)arrived;
		}
	}
}

/* Whether connection @i carried all a freeze lets through. */
static bool sim_frozen(unsigned int i)
{
	return sim.freeze_after &&
	       sim.stream0 + sim.rx[i] + 90 > sim.freeze_after;
}

static void sim_answer(void)
{
	if (sim.pending && now() >= sim.next_at) {
		sim.pending = false;
		if (sim_frozen(sim.next.index))
			return;
		sim.told = true;
		sim.tell = sim.next;
		sim.rx[sim.tell.index] += 90;
	}
}

/* Whether join @i opened as it is. */
static bool sim_plain(unsigned int i)
{
	return sim.join_shape[i] == PROBE_SHAPE_OFF ||
	       (sim.join_shape[i] == PROBE_SHAPE_DEVICE && sim.shape_off);
}

/* An ask of the probe's on connection @index: its answer, due 10 ms
 * from now unless the path loses it.
 */
static void sim_ask(const struct probe_step *step, uint32_t index,
		    struct probe_reply *reply)
{
	sim.asks++;
	reply->nonce = sim.nonce += 2;
	memset(&sim.next, 0, sizeof(sim.next));
	sim.next.nonce = reply->nonce;
	sim.next.step = step->step;
	sim.next.index = index;
	if (step->step == FTV_PROBE_PAD) {
		if (sim.budget >= step->bytes) {
			sim.budget -= step->bytes;
			sim.padding = true;
			sim.pad_index = step->index;
			sim.granted = step->bytes;
			sim.rate_kbit = step->rate;
			sim.pad_t0 = now();
			memset(sim.pad_came, 0, sizeof(sim.pad_came));
			sim.next.bytes = step->bytes;
		}
	} else if (step->step == FTV_PROBE_STOP && sim.padding) {
		sim.granted = sim_sent(now() - sim.pad_t0);
	}
	if (sim.padding)
		sim.next.left = sim.granted - sim_sent(now() - sim.pad_t0);
	sim.next.length = step->length > 20 ? step->length : 20;
	sim.pending = !sim.mute && (int)index != sim.silent &&
		      !(sim.max_len && step->length > sim.max_len) &&
		      !(sim.drop_answers && sim.padding &&
			sim.next.left && sim.asks % 2);
	sim.next_at = now() + 0.01;
}

int ipc_probe(const char *ifname, const uint8_t key[FTV_KEY_LEN],
	      const struct probe_step *step, struct probe_reply *reply)
{
	uint32_t index = step->index == FTV_PROBE_INDEX_ALL ? 0 : step->index;
	unsigned int i;

	(void)ifname;
	(void)key;
	memset(reply, 0, sizeof(*reply));
	sim_update();
	sim_answer();
	if (step->step == FTV_PROBE_JOIN) {
		if (!sim.n || sim.joins == PROBE_REACH_MAX)
			return -ENOTCONN;
		sim.join_shape[sim.joins] = step->shape;
		sim.join_at[sim.joins++] = now();
		reply->joined = 100 + sim.joins;
	} else if (step->step != FTV_PROBE_READ) {
		if (index >= sim.n) {
			fprintf(stderr, "%s: the peer's session or that connection is not up (%s)\n",
				PROG_NAME, strerror(ENOTCONN));
			return -ENOTCONN;
		}
		sim_ask(step, index, reply);
	}
	reply->told = sim.told;
	reply->tell = sim.tell;
	reply->n_conns = sim.n;
	for (i = 0; i < sim.n; i++) {
		reply->conns[i].index = i;
		reply->conns[i].rx_bytes = sim.rx[i];
		reply->conns[i].path_mtu = sim.route_mtu ? sim.route_mtu : 1500;
		reply->conns[i].has_rx_stream = true;
		reply->conns[i].rx_stream = sim.stream0 + sim.rx[i];
	}
	/* Joins come up a round trip after they went, unless blocked, and
	 * are recorded as the module does (joins-up).
	 */
	for (i = 0; i < sim.joins && !sim.port_blocked; i++)
		if (now() >= sim.join_at[i] + 0.02 &&
		    !(sim.plain_blocked && sim_plain(i)) &&
		    reply->n_joins_up < PROBE_JOINS_MAX)
			reply->joins_up[reply->n_joins_up++] = 101 + i;
	return 0;
}

int ipc_set_device(const struct device *dev)
{
	sim.shape_set = dev->flags & DEVICE_HAS_SHAPE;
	sim.shape_on = dev->shape;
	return 0;
}

unsigned int ipc_get_mtu(const char *ifname)
{
	(void)ifname;
	return 1420;
}

int ipc_set_mtu(const char *ifname, unsigned int mtu)
{
	(void)ifname;
	sim.mtu_set = mtu;
	return 0;
}

int ipc_get_devices(struct device **devices, const char *ifname)
{
	struct device *dev = calloc(1, sizeof(*dev));
	struct peer *peer = calloc(1, sizeof(*peer));
	unsigned int i;

	if (!dev || !peer)
		abort();
	snprintf(dev->name, sizeof(dev->name), "%s", ifname);
	dev->flags = DEVICE_HAS_PUBLIC_KEY | DEVICE_HAS_SHAPE;
	dev->shape = !sim.shape_off;
	for (i = 0; i < FTV_KEY_LEN; i++) {
		dev->public_key[i] = i + 100;
		peer->public_key[i] = i + 1;
	}
	peer->flags = PEER_HAS_PUBLIC_KEY | PEER_HAS_FLOWS | PEER_HAS_FEC |
		      PEER_HAS_FEC_STATS | PEER_HAS_ENDPOINTS | PEER_HAS_ROTATE;
	peer->flows = sim.flows;
	peer->fec = sim.fec;
	peer->rotate = ROTATE_DEFAULT;
	peer->fec_stats.active = sim.fec.mode != FTV_FEC_OFF;
	peer->fec_stats.loss_ppm = (uint32_t)(sim.loss * 1e6);
	peer->drops.count[FTV_DROPS_A_RST] = sim.rst;
	if (sim.rst) {
		peer->flags |= PEER_HAS_RESETS;
		peer->resets = (struct resets){ .ttl = 40, .peer_ttl = 63,
						.has_peer_ttl = true };
	}
	ep_set(&peer->endpoint, "198.51.100.2:51820");
	peer->flags |= PEER_HAS_ENDPOINT;
	if (sim.dials) {
		peer->endpoints = calloc(1, sizeof(*peer->endpoints));
		if (!peer->endpoints)
			abort();
		peer->endpoints->count = 1;
		peer->endpoints->ep[0] = peer->endpoint;
	}
	device_add_peer(dev, peer);
	*devices = dev;
	return 0;
}

int ipc_set_peer(const char *ifname, const struct peer *peer)
{
	(void)ifname;
	sim.applied = true;
	sim.set = *peer;
	return 0;
}

static const struct {
	const char *name;
	struct sim sim;
} sims[] = {
	{ "clean", { .n = 4, .flows = 4, .silent = -1, .fec = FEC_DEFAULT } },
	{ "policed", { .n = 4, .flows = 2, .silent = -1,
		       .per_conn_kbit = 2000, .fec.mode = FTV_FEC_OFF } },
	{ "shared", { .n = 4, .flows = 4, .silent = -1, .shared_kbit = 4000,
		      .fec = FEC_DEFAULT } },
	{ "lossy", { .n = 2, .flows = 2, .silent = -1, .loss = 0.03,
		     .fec.mode = FTV_FEC_OFF } },
	{ "hostile", { .n = 3, .flows = 3, .silent = 2, .rst = 2,
		       .fec = FEC_DEFAULT } },
	{ "single", { .n = 1, .flows = 1, .silent = -1, .loss = 0.008,
		      .fec = FEC_DEFAULT } },
	{ "spent", { .n = 4, .flows = 4, .silent = -1, .budget = 1 } },
	{ "policed-drops", { .n = 4, .flows = 4, .silent = -1,
			     .per_conn_kbit = 2000, .drop_answers = true,
			     .fec = FEC_DEFAULT } },
	{ "mtu-hole", { .n = 2, .flows = 2, .silent = -1, .max_len = 1204,
			.fec = FEC_DEFAULT } },
	{ "mtu-icmp", { .n = 2, .flows = 2, .silent = -1, .max_len = 1204,
			.route_mtu = 1280, .fec = FEC_DEFAULT } },
	{ "freeze", { .n = 4, .flows = 4, .silent = -1, .freeze_after = 16384,
		      .stream0 = 1500, .fec = FEC_DEFAULT } },
	{ "port-blocked", { .n = 2, .flows = 2, .silent = -1,
			    .port_blocked = true, .fec = FEC_DEFAULT } },
	{ "openings", { .n = 2, .flows = 2, .silent = -1, .plain_blocked = true,
			.shape_off = true, .fec = FEC_DEFAULT } },
	{ "mute", { .n = 4, .flows = 4, .silent = -1, .mute = true } },
	{ "down", { .n = 0, .flows = 4, .silent = -1 } },
};

/* argv: --run PEER [options]: probe ftv0 KEY [options] against it */
static int run_sim(int argc, char **argv)
{
	char key[KEY_B64_LEN + 1], *args[8] = { "probe", "ftv0", key };
	uint8_t raw[FTV_KEY_LEN];
	int i, ret, n = 3;
	size_t s;

	for (s = 0; s < sizeof(sims) / sizeof(sims[0]); s++)
		if (!strcmp(argv[2], sims[s].name))
			break;
	if (s == sizeof(sims) / sizeof(sims[0]) || argc > 8) {
		fprintf(stderr, "%s: no simulated peer '%s'\n", argv[0], argv[2]);
		return 2;
	}
	sim = sims[s].sim;
	sim.dials = true;
	if (!sim.budget)
		sim.budget = FTV_PROBE_MAX_BYTES;
	for (i = 0; i < FTV_KEY_LEN; i++)
		raw[i] = i + 1;
	key_to_base64(key, raw);
	for (i = 3; i < argc; i++)
		args[n++] = argv[i];
	ret = probe_main(n, args);
	fflush(stdout);
	if (sim.applied) {
		char fec[FEC_STRLEN];

		fec_to_string(fec, sim.set.fec);
		fprintf(stderr, "# applied: flows %s%u, fec %s%s\n",
			sim.set.flags & PEER_HAS_FLOWS ? "" : "(not) ",
			sim.set.flows, sim.set.flags & PEER_HAS_FEC ? "" : "(not) ",
			fec);
	}
	if (sim.mtu_set)
		fprintf(stderr, "# applied: mtu %u\n", sim.mtu_set);
	if (sim.shape_set)
		fprintf(stderr, "# applied: shape %s\n",
			sim.shape_on ? "on" : "off");
	fprintf(stderr, "# %u asks, %u bytes of budget left, exit %d\n",
		sim.asks, sim.budget, ret);
	return ret;
}

int main(int argc, char **argv)
{
	struct probe_report r;
	size_t i;

	if (sodium_init() < 0)
		return 2;
	if (argc >= 3 && !strcmp(argv[1], "--run"))
		return run_sim(argc, argv);
	if (argc == 3 && (!strcmp(argv[1], "--text") ||
			  !strcmp(argv[1], "--json"))) {
		for (i = 0; i < PATH_COUNT; i++) {
			if (strcmp(argv[2], paths[i].name))
				continue;
			paths[i].fill(&r);
			probe_judge(&r);
			if (!strcmp(argv[1], "--json"))
				probe_print_json(&r);
			else
				probe_print_text(&r);
			return 0;
		}
		fprintf(stderr, "%s: no path '%s'\n", argv[0], argv[2]);
		return 2;
	}
	if (argc != 1) {
		fprintf(stderr, "Usage: %s [--text | --json PATH | --run PEER [options]]\n",
			argv[0]);
		return 2;
	}
	printf("TAP version 13\n");
	test_rules();
	test_paths();
	printf("1..%d\n# %d passed, %d failed\n", tests, tests - failures,
	       failures);
	return failures ? 1 : 0;
}

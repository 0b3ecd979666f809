// SPDX-License-Identifier: GPL-2.0
/* Included at the end of faketcp.c in debug builds. */

/* A SYN exactly as Linux 6.1 lays it out: mss 1460, sackOK, TS, nop,
 * wscale 7.
 */
static const u8 linux_syn_options[] __initconst = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
};

/* Malformed option areas that must be refused. */
static const u8 bad_options[][8] __initconst = {
	{ 2, 4, 5, 1, 3, 3, 7, 8 },	/* a kind with no room for its length */
	{ 2, 1, 0, 0, 0, 0, 0, 0 },	/* length below two */
	{ 8, 9, 0, 0, 0, 0, 0, 0 },	/* timestamp with a wrong length */
	{ 1, 1, 1, 1, 1, 1, 1, 2 },	/* kind without a length byte */
};

static bool __init faketcp_roundtrip(void)
{
	struct ftv_tcp_params params = {
		.seq = 0xdeadbeef, .ack = 0, .flags = TCPHDR_SYN,
		.window = 64240, .tsval = 1, .tsecr = 0, .mss = 1460,
	};
	u8 buf[FTV_TCP_SYN_HLEN];
	struct tcphdr *th = (struct tcphdr *)buf;
	struct ftv_tcp_options opts;

	ftv_faketcp_write(th, htons(1), htons(2), &params);
	if (memcmp(th + 1, linux_syn_options, sizeof(linux_syn_options)) ||
	    th->doff * 4 != FTV_TCP_SYN_HLEN || ntohl(th->seq) != params.seq)
		return false;
	if (ftv_faketcp_parse_options(th, &opts) || opts.mss != 1460 ||
	    !opts.sack_ok || !opts.has_ts || opts.tsval != 1 ||
	    opts.wscale != FTV_TCP_WSCALE)
		return false;
	params.flags = TCPHDR_ACK | TCPHDR_PSH;
	params.tsval = 77;
	params.tsecr = 99;
	ftv_faketcp_write(th, htons(1), htons(2), &params);
	return th->doff * 4 == FTV_TCP_HLEN &&
	       !ftv_faketcp_parse_options(th, &opts) && opts.has_ts &&
	       opts.tsval == 77 && opts.tsecr == 99 && opts.wscale == -1;
}

/* One step of the receive tracker: data [seq, end) arrives at jiffies
 * now, after which the ACK number must be @want, and a gap given up if
 * @gave_up (the peer must then be told: open.c).
 */
struct rcv_step {
	u32 seq;
	u32 end;
	unsigned long now;
	u32 want;
	bool gave_up;
};

/* Sequence numbers wrap at R(512), on purpose. */
#define R(x) (0xfffffe00u + (x))

static const struct rcv_step rcv_steps[] __initconst = {
	{ R(0), R(100), 0, R(100) },		/* in order */
	{ R(200), R(300), 1, R(100) },		/* a gap at 100 */
	{ R(400), R(500), 1, R(100) },		/* a second gap */
	{ R(100), R(200), 2, R(300) },		/* first gap fills */
	{ R(50), R(150), 2, R(300) },		/* old data changes nothing */
	{ R(300), R(400), 2, R(500) },		/* second fills */
	{ R(600), R(700), 3, R(500) },		/* a gap that never fills... */
	{ R(700), R(800), 3, R(500) },
	{ R(800), R(900), 3 + HZ, R(900), true },	/* ...given up when stale */
	{ R(1000), R(1100), 3 + HZ, R(900) },	/* five gaps, four ranges: */
	{ R(1200), R(1300), 3 + HZ, R(900) },
	{ R(1400), R(1500), 3 + HZ, R(900) },
	{ R(1600), R(1700), 3 + HZ, R(900) },
	{ R(1800), R(1900), 3 + HZ, R(1100), true },	/* the oldest goes */
	{ R(1250), R(1650), 3 + HZ, R(1100) },	/* spans and merges two */
	{ R(1100), R(1200), 3 + HZ, R(1700) },
	{ R(1700), R(1800), 3 + HZ, R(1900) },
	{ R(1800) + FTV_TCP_GAP_BYTES, R(1900) + FTV_TCP_GAP_BYTES, 3 + HZ,
	  R(1900) },				/* far ahead, but within... */
	{ R(1900) + FTV_TCP_GAP_BYTES, R(2000) + FTV_TCP_GAP_BYTES, 3 + HZ,
	  R(2000) + FTV_TCP_GAP_BYTES, true },	/* ...until too far */
};

static bool __init faketcp_rcv_steps(void)
{
	struct ftv_tcp_rcv rcv = {};
	bool gave_up;
	size_t i;

	ftv_faketcp_rcv_init(&rcv);
	ftv_faketcp_rcv_reset(&rcv, R(0));
	for (i = 0; i < ARRAY_SIZE(rcv_steps); ++i) {
		const struct rcv_step *s = &rcv_steps[i];

		gave_up = ftv_faketcp_rcv_data(&rcv, s->seq, s->end, s->now);
		if (ftv_faketcp_rcv_nxt(&rcv) != s->want ||
		    gave_up != s->gave_up) {
			pr_err("faketcp self-test: receive step %zu acks %u, not %u; gave up %d, not %d\n",
			       i, ftv_faketcp_rcv_nxt(&rcv) - R(0), s->want - R(0),
			       gave_up, s->gave_up);
			return false;
		}
	}
	return true;
}

#undef R

/**
 * ftv_faketcp_selftest - check the header codec against Linux's layout
 *
 * Return: true if every case passes.
 */
bool __init ftv_faketcp_selftest(void)
{
	u8 buf[sizeof(struct tcphdr) + 8];
	struct tcphdr *th = (struct tcphdr *)buf;
	struct ftv_tcp_options opts;
	bool ok = faketcp_roundtrip() && faketcp_rcv_steps();
	size_t i;

	memset(th, 0, sizeof(*th));
	th->doff = sizeof(buf) / 4;
	for (i = 0; i < ARRAY_SIZE(bad_options); ++i) {
		memcpy(th + 1, bad_options[i], 8);
		if (!ftv_faketcp_parse_options(th, &opts)) {
			pr_err("faketcp self-test: bad option %zu\n", i);
			ok = false;
		}
	}
	if (ok)
		pr_info("faketcp self-tests: pass\n");
	else
		pr_err("faketcp self-tests: fail\n");
	return ok;
}

// SPDX-License-Identifier: GPL-2.0
/* Included at the end of segment.c in debug builds. */

struct segment_case {
	const char *what;
	unsigned int payload;	/* bytes after the TCP header */
	unsigned int pad;	/* link-layer padding past the IP length */
	u16 tot_len;		/* 0: as a BIG TCP superpacket says */
	bool gso;
	int ret;		/* what ftv_segment_check() must return */
	unsigned int payload_len;	/* and then see */
};

static const struct segment_case segment_cases[] __initconst = {
	{ "plain", 100, 0, 140, false, 0, 100 },
	{ "padded", 6, 20, 46, false, 0, 6 },
	{ "IP length past the packet", 100, 0, 200, false, -EINVAL, 0 },
	{ "IP length 0 on a lone packet", 100, 0, 0, false, -EINVAL, 0 },
	{ "BIG TCP superpacket", 70000, 0, 0, true, 0, 70000 },
};

static struct sk_buff *__init segment_build(const struct segment_case *c)
{
	unsigned int len = sizeof(struct iphdr) + sizeof(struct tcphdr) +
			   c->payload + c->pad;
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);
	struct iphdr *iph;
	struct tcphdr *th;

	if (!skb)
		return NULL;
	skb_put_zero(skb, len);
	skb_reset_network_header(skb);
	skb->protocol = htons(ETH_P_IP);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->tot_len = htons(c->tot_len);
	iph->saddr = htonl(0xc0000201);
	iph->daddr = htonl(0xc0000202);
	th = (struct tcphdr *)(iph + 1);
	th->source = htons(40000);
	th->dest = htons(51820);
	th->doff = 5;
	th->ack = 1;
	if (c->gso) {
		skb_shinfo(skb)->gso_size = 1400;
		skb_shinfo(skb)->gso_type = SKB_GSO_TCPV4;
	}
	return skb;
}

/**
 * ftv_segment_selftest - lengths as the receive hook sees them
 *
 * Return: true if every case is parsed and checked as expected.
 */
bool __init ftv_segment_selftest(void)
{
	struct ftv_segment seg;
	unsigned int thoff;
	struct sk_buff *skb;
	bool ok = true;
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(segment_cases); ++i) {
		const struct segment_case *c = &segment_cases[i];

		skb = segment_build(c);
		if (!skb)
			return false;
		ret = ftv_segment_parse(skb, &seg, &thoff) ?
		      ftv_segment_check(skb, &seg, thoff, NULL) : -EPROTO;
		if (ret != c->ret || (!ret && seg.payload_len != c->payload_len)) {
			pr_err("segment self-test: %s: %d, payload %u\n",
			       c->what, ret, ret ? 0 : seg.payload_len);
			ok = false;
		}
		kfree_skb(skb);
	}
	if (ok)
		pr_info("segment self-tests: pass\n");
	return ok;
}

// SPDX-License-Identifier: GPL-2.0
/* Included at the end of segment.c in debug builds. */

struct segment_case {
	const char *what;
	bool v6;
	bool jumbo;		/* an IPv6 hop-by-hop jumbo header, as GRO adds */
	unsigned int payload;	/* bytes after the TCP header */
	unsigned int pad;	/* link-layer padding past the IP length */
	u16 ip_len;		/* IPv4 total or IPv6 payload length; 0: as
				 * a BIG TCP superpacket says
				 */
	bool gso;
	int ret;		/* what ftv_segment_check() must return;
				 * -EPROTO: ftv_segment_parse() refuses it
				 */
	unsigned int payload_len;	/* and then see */
};

static const struct segment_case segment_cases[] __initconst = {
	{ "plain", false, false, 100, 0, 140, false, 0, 100 },
	{ "padded", false, false, 6, 20, 46, false, 0, 6 },
	{ "IP length past the packet", false, false, 100, 0, 200, false,
	  -EINVAL, 0 },
	{ "IP length 0 on a lone packet", false, false, 100, 0, 0, false,
	  -EINVAL, 0 },
	{ "BIG TCP superpacket", false, false, 70000, 0, 0, true, 0, 70000 },
	{ "IPv6 plain", true, false, 100, 0, 120, false, 0, 100 },
	{ "IPv6 padded", true, false, 6, 20, 26, false, 0, 6 },
	{ "IPv6 length 0 on a lone packet", true, false, 100, 0, 0, false,
	  -EINVAL, 0 },
	{ "IPv6 BIG TCP superpacket, jumbo header", true, true, 70000, 0, 0,
	  true, 0, 70000 },
	{ "IPv6 BIG TCP superpacket, no jumbo header", true, false, 70000, 0,
	  0, true, 0, 70000 },
	{ "IPv6 jumbo header on a lone packet", true, true, 70000, 0, 0,
	  false, -EPROTO, 0 },
};

static void __init segment_build_v4(struct sk_buff *skb,
				    const struct segment_case *c)
{
	struct iphdr *iph = ip_hdr(skb);

	skb->protocol = htons(ETH_P_IP);
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->tot_len = htons(c->ip_len);
	iph->saddr = htonl(0xc0000201);
	iph->daddr = htonl(0xc0000202);
	skb_shinfo(skb)->gso_type = SKB_GSO_TCPV4;
}

static void __init segment_build_v6(struct sk_buff *skb,
				    const struct segment_case *c)
{
	struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct hop_jumbo_hdr *hop = (struct hop_jumbo_hdr *)(ip6h + 1);

	skb->protocol = htons(ETH_P_IPV6);
	ip6h->version = 6;
	ip6h->hop_limit = 64;
	ip6h->payload_len = htons(c->ip_len);
	ip6h->saddr.s6_addr[0] = 0xfd;
	ip6h->saddr.s6_addr[15] = 1;
	ip6h->daddr.s6_addr[0] = 0xfd;
	ip6h->daddr.s6_addr[15] = 2;
	ip6h->nexthdr = IPPROTO_TCP;
	if (c->jumbo) {
		ip6h->nexthdr = NEXTHDR_HOP;
		hop->nexthdr = IPPROTO_TCP;
		hop->tlv_type = IPV6_TLV_JUMBO;
		hop->tlv_len = 4;
		hop->jumbo_payload_len = htonl(sizeof(*hop) +
					       sizeof(struct tcphdr) +
					       c->payload);
	}
	skb_shinfo(skb)->gso_type = SKB_GSO_TCPV6;
}

static struct sk_buff *__init segment_build(const struct segment_case *c)
{
	unsigned int iplen = c->v6 ? sizeof(struct ipv6hdr) +
				     (c->jumbo ? sizeof(struct hop_jumbo_hdr) : 0) :
				     sizeof(struct iphdr);
	unsigned int len = iplen + sizeof(struct tcphdr) + c->payload + c->pad;
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);
	struct tcphdr *th;

	if (!skb)
		return NULL;
	skb_put_zero(skb, len);
	skb_reset_network_header(skb);
	if (c->v6)
		segment_build_v6(skb, c);
	else
		segment_build_v4(skb, c);
	th = (struct tcphdr *)(skb->data + iplen);
	th->source = htons(40000);
	th->dest = htons(51820);
	th->doff = 5;
	th->ack = 1;
	if (c->gso)
		skb_shinfo(skb)->gso_size = 1400;
	else
		skb_shinfo(skb)->gso_type = 0;
	return skb;
}

/* Where the TCP header must be once the jumbo header is out. */
static unsigned int __init segment_thoff(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return sizeof(struct iphdr);
	return ipv6_hdr(skb)->nexthdr == IPPROTO_TCP ?
	       sizeof(struct ipv6hdr) : 0;
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
	int ret, want;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(segment_cases); ++i) {
		const struct segment_case *c = &segment_cases[i];

		skb = segment_build(c);
		if (!skb)
			return false;
		ret = !ftv_segment_parse(skb, &seg, &thoff) ? -EPROTO :
		      ftv_segment_strip_jumbo(skb, &thoff) ?:
		      ftv_segment_check(skb, &seg, thoff, NULL);
		if (!ret && (thoff != segment_thoff(skb) ||
			     seg.th->dest != htons(51820) ||
			     seg.payload_off + seg.payload_len != skb->len))
			ret = -EFAULT;
		/* Where GRO never makes a jumbo header, ftv takes none. */
		want = c->jumbo && !FTV_COMPAT_HOP_JUMBO ? -EPROTO : c->ret;
		if (ret != want || (!ret && seg.payload_len != c->payload_len)) {
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

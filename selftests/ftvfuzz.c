// SPDX-License-Identifier: GPL-2.0
/*
 * ftvfuzz - throw crafted IPv4 segments at an ftv listen port and at a live
 * connection, as fast as a packet socket takes them.
 *
 *	ftvfuzz IFACE DSTMAC SRC DST PORT COUNT [LIVEPORT PCAP]
 *
 * Sends COUNT frames out of IFACE to DSTMAC, from SRC to DST, in classes
 * taken in turn:
 *   ipjunk	an IPv4 header that the IP layer refuses (bad length, bad
 *		header length, bad checksum) or a fragment, then random bytes
 *   tcpshort	a TCP header cut short (fewer than 20 bytes)
 *   tcpbad	a whole TCP header with a bad data offset or options that run
 *		past it, zero-length or oversized
 *   listen	a well-formed ACK with a random payload to PORT from a random
 *		source port: no connection, and no SYN cookie it could match
 *   syn	a SYN to PORT from a random source port, with Linux's options
 *		and no token
 * and, when LIVEPORT (the live connection's port on SRC) and PCAP (a
 * capture of its segments from SRC to DST) are given:
 *   live	a well-formed segment on the live connection's 4-tuple, random
 *		sequence numbers (in and out of window) and a random payload of
 *		at least one message's overhead
 *   replay	a genuine segment from PCAP, unchanged but for its TCP
 *		checksum, made right (a capture at the sender holds what
 *		checksum offload was yet to fill in; on the wire it was right)
 *   flip	a genuine segment with one payload bit flipped
 *
 * Prints one line per class, "CLASS SENT", then what ftv should count for
 * them: "expect tuple N" (live, replay, flip: each is the peer's bad_auth,
 * replay or out_of_window, by where its sequence number falls) and
 * "expect syn_refused N" (syn, a device counter). Everything else is the
 * host's: ftv takes no segment to its listen port without a connection
 * unless it is a SYN with a valid token or carries the cookie of a
 * SYN-ACK ftv sent (module/token.c), so those classes end in the host's
 * IP and TCP layers (a SYN without a token gets the host's RST; ftv only
 * counts it).
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define FRAME_MAX 1500
#define GENUINE_MAX 4096
#define MSG_OVERHEAD 24	/* counter and tag: the smallest data message */

enum class { IPJUNK, TCPSHORT, TCPBAD, LISTEN, SYN, LIVE, REPLAY, FLIP,
	     NCLASS };
static const char *const class_name[NCLASS] = {
	"ipjunk", "tcpshort", "tcpbad", "listen", "syn", "live", "replay",
	"flip",
};

struct genuine {
	unsigned int len;
	uint8_t pkt[FRAME_MAX];
};

static struct in_addr src, dst;
static uint16_t port, live_port;
static struct genuine *genuine;
static unsigned int ngenuine;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	/* xorshift64*: fast, and plenty for junk */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	while (n--)
		*p++ = rnd();
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; p += 2, len -= 2)
		sum += (p[0] << 8) | p[1];
	if (len)
		sum += p[0] << 8;
	return sum;
}

static void ip_header(uint8_t *pkt, unsigned int len)
{
	struct iphdr *iph = (struct iphdr *)pkt;

	memset(iph, 0, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->tot_len = htons(len);
	iph->id = rnd();
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->saddr = src.s_addr;
	iph->daddr = dst.s_addr;
	iph->check = htons(csum_fold(csum_add(0, iph, sizeof(*iph))));
}

/* TCP checksum over the pseudo-header, right most of the time. */
static void tcp_checksum(uint8_t *pkt, unsigned int len, int right)
{
	struct tcphdr *th = (struct tcphdr *)(pkt + 20);
	unsigned int tlen = len - 20;
	uint32_t sum = 0;
	uint8_t pseudo[12];

	memcpy(pseudo, &src, 4);
	memcpy(pseudo + 4, &dst, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP;
	pseudo[10] = tlen >> 8;
	pseudo[11] = tlen;
	th->check = 0;
	sum = csum_add(sum, pseudo, sizeof(pseudo));
	sum = csum_add(sum, th, tlen);
	th->check = htons(csum_fold(sum)) ^ (right ? 0 : 0x5a5a);
}

/* A TCP header as Linux writes it after the handshake: NOP, NOP, TS. */
static unsigned int tcp_header(uint8_t *pkt, uint16_t sport, uint32_t seq,
			       uint32_t ack, uint8_t flags)
{
	struct tcphdr *th = (struct tcphdr *)(pkt + 20);
	uint8_t *opt = (uint8_t *)(th + 1);
	uint32_t ts[2] = { rnd(), rnd() };

	memset(th, 0, sizeof(*th));
	th->source = htons(sport);
	th->dest = htons(port);
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = 8;
	((uint8_t *)th)[13] = flags;
	th->window = htons(502);
	opt[0] = 1;
	opt[1] = 1;
	opt[2] = 8;
	opt[3] = 10;
	memcpy(opt + 4, ts, sizeof(ts));
	return 20 + 32;
}

static uint16_t random_port(void)
{
	uint16_t p;

	do
		p = 1024 + rnd() % 64512;
	while (p == live_port);
	return p;
}

static unsigned int make_ipjunk(uint8_t *pkt)
{
	unsigned int len = 40 + rnd() % 200;
	struct iphdr *iph = (struct iphdr *)pkt;

	rnd_bytes(pkt, len);
	ip_header(pkt, len);
	switch (rnd() % 4) {
	case 0:	/* longer than the frame */
		iph->tot_len = htons(len + 1 + rnd() % 1000);
		break;
	case 1:	/* header length below 5 words or past the packet */
		iph->ihl = rnd() % 2 ? rnd() % 5 : 15;
		iph->tot_len = htons(rnd() % 2 ? len : 20 + rnd() % 40);
		break;
	case 2:	/* a fragment of something */
		iph->frag_off = htons(IP_MF | (rnd() % 100));
		break;
	case 3:	/* a bad header checksum */
		iph->check ^= 0x0101;
		return len;
	}
	iph->check = 0;
	iph->check = htons(csum_fold(csum_add(0, iph, sizeof(*iph))));
	return len;
}

static unsigned int make_tcpshort(uint8_t *pkt)
{
	unsigned int len = 20 + 1 + rnd() % 19;

	rnd_bytes(pkt + 20, len - 20);
	pkt[20] = random_port() >> 8;
	pkt[22] = port >> 8;
	pkt[23] = port;
	ip_header(pkt, len);
	return len;
}

static unsigned int make_tcpbad(uint8_t *pkt)
{
	unsigned int hlen = tcp_header(pkt, random_port(), rnd(), rnd(),
				       TH_ACK | TH_PUSH);
	struct tcphdr *th = (struct tcphdr *)(pkt + 20);
	uint8_t *opt = (uint8_t *)(th + 1);
	unsigned int len;

	switch (rnd() % 3) {
	case 0:	/* options that run past the header */
		opt[2] = 8;
		opt[3] = 40 + rnd() % 200;
		len = 20 + hlen;
		break;
	case 1:	/* a zero-length option */
		opt[2] = 2 + rnd() % 250;
		opt[3] = 0;
		len = 20 + hlen;
		break;
	default: /* a data offset past the end of the segment */
		th->doff = 15;
		len = 20 + 20 + rnd() % 39;
		break;
	}
	ip_header(pkt, len);
	tcp_checksum(pkt, len, 1);
	return len;
}

static unsigned int make_listen(uint8_t *pkt)
{
	unsigned int len = 20 + tcp_header(pkt, random_port(), rnd(), rnd(),
					   TH_ACK | TH_PUSH);
	unsigned int plen = 1 + rnd() % 1200;

	rnd_bytes(pkt + len, plen);
	len += plen;
	ip_header(pkt, len);
	tcp_checksum(pkt, len, rnd() % 16);
	return len;
}

static unsigned int make_syn(uint8_t *pkt)
{
	struct tcphdr *th;
	uint8_t *opt;
	unsigned int len = 20 + 20 + 20;
	uint32_t tsval = rnd();

	tcp_header(pkt, random_port(), rnd(), 0, TH_SYN);
	th = (struct tcphdr *)(pkt + 20);
	th->doff = 10;
	th->window = htons(64240);
	opt = (uint8_t *)(th + 1);
	/* MSS 1460, SACK permitted, TS, NOP, window scale 7 */
	memcpy(opt, "\x02\x04\x05\xb4\x04\x02\x08\x0a", 8);
	memcpy(opt + 8, &tsval, 4);
	memset(opt + 12, 0, 4);
	memcpy(opt + 16, "\x01\x03\x03\x07", 4);
	ip_header(pkt, len);
	tcp_checksum(pkt, len, 1);
	return len;
}

static unsigned int make_live(uint8_t *pkt)
{
	unsigned int len = 20 + tcp_header(pkt, live_port, rnd(), rnd(),
					   TH_ACK | TH_PUSH);
	unsigned int plen = MSG_OVERHEAD + rnd() % 1300;

	rnd_bytes(pkt + len, plen);
	len += plen;
	ip_header(pkt, len);
	tcp_checksum(pkt, len, 1);
	return len;
}

static unsigned int make_genuine(uint8_t *pkt, int flip)
{
	const struct genuine *g = &genuine[rnd() % ngenuine];
	const struct iphdr *iph = (const struct iphdr *)g->pkt;
	const struct tcphdr *th = (const struct tcphdr *)(g->pkt +
							  iph->ihl * 4);
	unsigned int off = iph->ihl * 4 + th->doff * 4;

	memcpy(pkt, g->pkt, g->len);
	if (flip)
		pkt[off + rnd() % (g->len - off)] ^= 1 << (rnd() % 8);
	tcp_checksum(pkt, g->len, 1);
	return g->len;
}

/*
 * Read the IPv4 TCP segments with a payload from SRC to DST:PORT out of a
 * pcap file of Ethernet (or Linux cooked) frames, as tcpdump -w writes.
 */
static int load_pcap(const char *path)
{
	uint8_t hdr[24], rec[16], frame[65536];
	unsigned int linkhdr;
	FILE *f = fopen(path, "rb");

	if (!f) {
		perror(path);
		return -1;
	}
	if (fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr) ||
	    *(uint32_t *)hdr != 0xa1b2c3d4) {
		fprintf(stderr, "%s: not a little-endian pcap file\n", path);
		fclose(f);
		return -1;
	}
	linkhdr = *(uint32_t *)(hdr + 20) == 113 ? 16 : 14;
	genuine = calloc(GENUINE_MAX, sizeof(*genuine));
	if (!genuine) {
		fclose(f);
		return -1;
	}
	while (ngenuine < GENUINE_MAX && fread(rec, 1, 16, f) == 16) {
		uint32_t caplen = *(uint32_t *)(rec + 8);
		const struct iphdr *iph = (const struct iphdr *)(frame + linkhdr);
		const struct tcphdr *th;
		unsigned int len;

		if (caplen > sizeof(frame) || fread(frame, 1, caplen, f) != caplen)
			break;
		if (caplen < linkhdr + 40 || iph->version != 4 ||
		    iph->protocol != IPPROTO_TCP ||
		    iph->saddr != src.s_addr || iph->daddr != dst.s_addr)
			continue;
		len = ntohs(iph->tot_len);
		th = (const struct tcphdr *)((const uint8_t *)iph + iph->ihl * 4);
		if (len > FRAME_MAX || len > caplen - linkhdr ||
		    ntohs(th->dest) != port ||
		    len <= iph->ihl * 4u + th->doff * 4u + MSG_OVERHEAD)
			continue;
		memcpy(genuine[ngenuine].pkt, iph, len);
		genuine[ngenuine++].len = len;
	}
	fclose(f);
	return 0;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		      &mac[2], &mac[3], &mac[4], &mac[5]) == 6 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static uint8_t frames[BATCH][FRAME_MAX];
	unsigned long long sent[NCLASS] = { 0 }, count, done = 0;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll = { 0 };
	enum class cls[BATCH];
	unsigned int nclass = LIVE;
	struct timespec t0, t1;
	int fd, i;

	if (argc != 7 && argc != 9) {
		fprintf(stderr, "usage: %s IFACE DSTMAC SRC DST PORT COUNT [LIVEPORT PCAP]\n",
			argv[0]);
		return 2;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_IP);
	sll.sll_ifindex = if_nametoindex(argv[1]);
	sll.sll_halen = ETH_ALEN;
	if (!sll.sll_ifindex || parse_mac(argv[2], sll.sll_addr) ||
	    inet_pton(AF_INET, argv[3], &src) != 1 ||
	    inet_pton(AF_INET, argv[4], &dst) != 1) {
		fprintf(stderr, "ftvfuzz: bad interface, MAC or address\n");
		return 2;
	}
	port = atoi(argv[5]);
	count = strtoull(argv[6], NULL, 10);
	if (argc == 9) {
		live_port = atoi(argv[7]);
		if (load_pcap(argv[8]))
			return 2;
		if (!ngenuine) {
			fprintf(stderr, "ftvfuzz: no data segment in %s\n", argv[8]);
			return 2;
		}
		nclass = NCLASS;
	}
	rng ^= (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);

	fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
	if (fd < 0) {
		perror("ftvfuzz: socket");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < count) {
		int n = count - done < BATCH ? count - done : BATCH, ret;

		for (i = 0; i < n; i++) {
			unsigned int len = 0;

			cls[i] = (done + i) % nclass;
			switch (cls[i]) {
			case IPJUNK: len = make_ipjunk(frames[i]); break;
			case TCPSHORT: len = make_tcpshort(frames[i]); break;
			case TCPBAD: len = make_tcpbad(frames[i]); break;
			case LISTEN: len = make_listen(frames[i]); break;
			case SYN: len = make_syn(frames[i]); break;
			case LIVE: len = make_live(frames[i]); break;
			case REPLAY: len = make_genuine(frames[i], 0); break;
			case FLIP: len = make_genuine(frames[i], 1); break;
			case NCLASS: break;
			}
			iov[i].iov_base = frames[i];
			iov[i].iov_len = len;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_name = &sll;
			msgs[i].msg_hdr.msg_namelen = sizeof(sll);
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		ret = sendmmsg(fd, msgs, n, 0);
		if (ret < 0) {
			if (errno == ENOBUFS || errno == EAGAIN) {
				usleep(1000);
				continue;
			}
			perror("ftvfuzz: sendmmsg");
			return 1;
		}
		for (i = 0; i < ret; i++)
			sent[cls[i]]++;
		done += ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	for (i = 0; i < (int)nclass; i++)
		printf("%s %llu\n", class_name[i], sent[i]);
	printf("expect tuple %llu\n", sent[LIVE] + sent[REPLAY] + sent[FLIP]);
	printf("expect syn_refused %llu\n", sent[SYN]);
	printf("total %llu in %.1f s\n", done,
	       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	close(fd);
	return 0;
}

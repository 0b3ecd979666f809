// SPDX-License-Identifier: GPL-2.0
/*
 * Forward error correction for lossy paths: a peer's setting and counters.
 */

#include "fec.h"
#include "peer.h"

#include <linux/ftv.h>
#include <net/netlink.h>

/**
 * ftv_fec_config - read a peer's FEC setting
 * @peer: the peer
 *
 * Return: the setting, read in one go.
 */
struct ftv_fec_config ftv_fec_config(struct ftv_peer *peer)
{
	u32 packed = READ_ONCE(peer->fec_setting);
	struct ftv_fec_config cfg = {
		.mode = packed,
		.data = packed >> 8,
		.repair = packed >> 16,
	};

	return cfg;
}

/**
 * ftv_fec_configure - change a peer's FEC setting
 * @peer: the peer
 * @mode: enum ftv_fec_mode
 * @data: K for FTV_FEC_FIXED, else ignored
 * @repair: M for FTV_FEC_FIXED, else ignored
 */
void ftv_fec_configure(struct ftv_peer *peer, u8 mode, u8 data, u8 repair)
{
	if (mode != FTV_FEC_FIXED) {
		data = 0;
		repair = 0;
	}
	WRITE_ONCE(peer->fec_setting, mode | data << 8 | (u32)repair << 16);
}

/**
 * ftv_fec_put_stats - the peer's FEC counters as a netlink nest
 * @skb: the message
 * @peer: the peer
 * @attr: the nest's type
 *
 * Return: 0 or -EMSGSIZE.
 */
int ftv_fec_put_stats(struct sk_buff *skb, struct ftv_peer *peer, int attr)
{
	struct nlattr *nest = nla_nest_start(skb, attr);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u8(skb, FTV_FEC_A_ACTIVE, 0) ||
	    nla_put_u8(skb, FTV_FEC_A_DATA, 0) ||
	    nla_put_u8(skb, FTV_FEC_A_REPAIR, 0) ||
	    nla_put_u32(skb, FTV_FEC_A_LOSS_PPM, 0) ||
	    nla_put_u64_64bit(skb, FTV_FEC_A_REPAIR_SENT, 0, FTV_FEC_A_PAD) ||
	    nla_put_u64_64bit(skb, FTV_FEC_A_REBUILT, 0, FTV_FEC_A_PAD) ||
	    nla_put_u64_64bit(skb, FTV_FEC_A_GROUPS_LOST, 0, FTV_FEC_A_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

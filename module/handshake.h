/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_HANDSHAKE_H
#define _FTV_HANDSHAKE_H

struct ftv_conn;
struct ftv_segment;
struct sk_buff;

void ftv_handshake_synack(struct ftv_conn *conn, struct sk_buff *skb,
			  const struct ftv_segment *seg);
void ftv_handshake_response(struct ftv_conn *conn, struct sk_buff *skb,
			    const struct ftv_segment *seg);

#endif /* _FTV_HANDSHAKE_H */

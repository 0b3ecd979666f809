/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_SEND_H
#define _FTV_SEND_H

#include "queue.h"

#include <linux/siphash.h>
#include <linux/skbuff.h>

struct ftv_conn;
struct ftv_device;
struct ftv_peer;
struct ftv_tuple;
struct ftv_tcp_params;
struct dst_cache;
struct dst_entry;
struct net;

/* Headroom for the outer headers, the data header and a link layer. */
#define FTV_SEND_HEADROOM (LL_MAX_HEADER + FTV_OUTER_MAX_HLEN + \
			   sizeof(struct ftv_msg_data))

void ftv_send_packet(struct ftv_peer *peer, struct sk_buff *skb);
enum ftv_job_state ftv_send_crypt(struct sk_buff *head);
struct ftv_serial *ftv_send_serial(struct sk_buff *head);
void ftv_send_finish_job(struct sk_buff *head);
struct sk_buff *ftv_send_message_alloc(unsigned int len);
void ftv_send_message(struct ftv_conn *conn, struct sk_buff *skb, bool shape);
void ftv_send_syn(struct ftv_conn *conn);
void ftv_send_join_synack(struct ftv_conn *conn);
void ftv_send_ack(struct ftv_conn *conn);
void ftv_send_payload(struct ftv_conn *conn, const void *data,
		      unsigned int len);
void ftv_send_synack(struct ftv_device *fdev, const struct ftv_tuple *tuple,
		     const struct ftv_tcp_params *params);
int ftv_send_pick_source(struct ftv_device *fdev, struct net *net,
			 struct ftv_tuple *tuple);
struct dst_entry *ftv_send_route(struct ftv_device *fdev, struct net *net,
				 struct ftv_tuple *tuple,
				 struct dst_cache *cache);
struct dst_entry *ftv_send_conn_route(struct ftv_conn *conn,
				      struct ftv_tuple *tuple);

#endif /* _FTV_SEND_H */

/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_OPEN_H
#define _FTV_OPEN_H

#include "queue.h"

#include <linux/types.h>

struct ftv_conn;
struct ftv_segment;
struct sk_buff;

bool ftv_open_stash(struct ftv_conn *conn, struct sk_buff *skb,
		    const struct ftv_segment *seg);
void ftv_open_queue(struct ftv_conn *conn, struct sk_buff *head,
		    unsigned int segs);
void ftv_open_track(struct ftv_conn *conn, const struct ftv_segment *seg);
enum ftv_job_state ftv_open_crypt(struct sk_buff *head);
struct ftv_serial *ftv_open_serial(struct sk_buff *head);
void ftv_open_finish_job(struct sk_buff *head);

#endif /* _FTV_OPEN_H */

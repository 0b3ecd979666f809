/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_TIMERS_H
#define _FTV_TIMERS_H

#include <linux/types.h>

struct ftv_peer;

void ftv_timers_init(struct ftv_peer *peer);
void ftv_timers_stop(struct ftv_peer *peer);
void ftv_timers_want_connection(struct ftv_peer *peer);
void ftv_timers_path_moved(struct ftv_peer *peer);
void ftv_timers_connect_started(struct ftv_peer *peer);
void ftv_timers_connected(struct ftv_peer *peer);
void ftv_timers_sent(struct ftv_peer *peer, bool data);
void ftv_timers_received(struct ftv_peer *peer, bool data);
void ftv_timers_keepalive_changed(struct ftv_peer *peer);

#endif /* _FTV_TIMERS_H */

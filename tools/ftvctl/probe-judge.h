/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `ftvctl probe` makes of the numbers it measured: the verdict
 * rules, the settings recommended from the verdicts, and the report for
 * people and for programs. Nothing here speaks netlink (probe.c runs the
 * steps and fills struct probe_report), so tests/probe-test.c can feed it
 * made-up paths.
 */
#ifndef FTVCTL_PROBE_JUDGE_H
#define FTVCTL_PROBE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "containers.h"
#include "encoding.h"
#include "ipc.h"

/* The whole run, at most (the man page says so). */
#define PROBE_SECONDS 30
/* The policing step's pad: this much, at this rate, on one connection and
 * then spread over all.
 */
#define PROBE_PAD_BYTES 1000000
#define PROBE_PAD_KBIT 8000
/* Loss above this, in parts per million, is a verdict: 0.5 %. */
#define PROBE_LOSS_PPM 5000
/* The flows recommended against a per-connection policer. */
#define PROBE_POLICED_FLOWS 4
/* What a data message adds to its plaintext in a segment's payload: its
 * counter and its tag (protocol.md, section 2).
 */
#define PROBE_MSG_OVERHEAD 24
/* The path MTU search: from the device's MTU down to this, to within
 * this step.
 */
#define PROBE_MTU_MIN 576
#define PROBE_MTU_STEP 4
/* The freeze step's pad on each connection, at PROBE_PAD_KBIT, on at most
 * this many connections; a pad stopped coming when nothing of it came for
 * this long before the peer sent its last.
 */
#define PROBE_FREEZE_BYTES 500000
#define PROBE_FREEZE_CONNS 3
#define PROBE_FREEZE_QUIET 0.25
/* A freeze after this much or more is not one ftv's budgets answer. */
#define PROBE_FREEZE_MAX 1000000
/* The smallest budget rotate takes. */
#define PROBE_ROTATE_MIN 4096
/* The reach step: this many joins from fresh source ports to the current
 * endpoint whose first message goes shaped, as many whose first goes as
 * it is, and one to each other endpoint of the peer's list, each up or
 * not within this many seconds (a join's SYN goes again after 1 s, and
 * the module gives the join up after 3 s).
 */
#define PROBE_REACH_FRESH 2
#define PROBE_REACH_WAIT 2.5
#define PROBE_REACH_MAX (2 * PROBE_REACH_FRESH + FTV_MAX_ENDPOINTS - 1)

/* A pad, and what came of it on each connection. */
struct pad_result {
	uint32_t granted;	/* padding the peer granted; 0: over its budget */
	double seconds;		/* from the ask to the last of it being sent */
	unsigned int n;		/* connections up at its end */
	uint32_t index[PROBE_CONNS_MAX];
	uint64_t came[PROBE_CONNS_MAX];	/* payload that came on each meanwhile */
};

enum policing {
	POLICING_NOT_MEASURED,	/* probe_report.not_measured says why */
	POLICING_NONE,		/* one connection brought 90 % of the pad */
	POLICING_PER_CONN,	/* all brought 2.5 times one, each as one did */
	POLICING_SHARED,	/* all brought no more than 1.2 times one */
	POLICING_UNCLEAR,	/* neither */
};

/* One connection's pad of the freeze step. */
struct freeze_result {
	uint32_t index;
	uint32_t granted;	/* 0: the peer gave nothing */
	uint64_t came;		/* padding that came on it */
	uint64_t carried;	/* its stream towards this end when it stopped */
	bool froze;		/* nothing came for PROBE_FREEZE_QUIET before the end */
};

/* One join of the reach step. */
struct reach_result {
	union endpoint ep;
	bool current;		/* to the endpoint the session rides */
	enum probe_shape shape;	/* how it opened */
	bool up;
	unsigned int ms;	/* from the step to it being up */
};

struct probe_conn_result {
	uint32_t index;
	uint64_t rx_bytes;	/* when the probe began */
	bool measured;		/* an echo was sent on it (not with --quick) */
	bool answered;
	unsigned int ms;	/* the answer's round trip */
};

struct probe_verdict {
	const char *name;	/* one of the PROBE_V_* names */
	char evidence[320];
};

#define PROBE_V_SILENT "connection does not answer"
#define PROBE_V_RESETS "injected resets"
#define PROBE_V_PER_CONN "per-connection policer"
#define PROBE_V_SHARED "shared bottleneck"
#define PROBE_V_LOSS "loss"
#define PROBE_V_MTU_HOLE "path MTU black hole"
#define PROBE_V_MTU_LOW "path MTU below the device's"
#define PROBE_V_FREEZE "byte-budget freeze"
#define PROBE_V_PORT "port blocked"
#define PROBE_V_ENDPOINT "endpoint blocked"
#define PROBE_V_OPENINGS "openings filtered"

#define PROBE_VERDICTS_MAX (PROBE_CONNS_MAX + 6)

/*
 * Everything a run measured, filled in by probe.c step by step; the
 * verdicts and the recommendation are probe_judge()'s.
 */
struct probe_report {
	char ifname[IFNAMSIZ];
	uint8_t key[FTV_KEY_LEN];
	/* This device's public key, for a command to run at the peer. */
	bool has_own_key;
	uint8_t own_key[FTV_KEY_LEN];

	/* The peer's settings at this end. */
	uint8_t flows;
	struct fec fec;
	uint32_t rotate;
	bool dials;		/* this end opens the sessions: flows is set here */
	union endpoint endpoint;	/* the current one */
	struct endpoint_list endpoints;	/* count 0: no list */
	bool shape_known, shape;	/* the device's shape setting */

	/* 1. The answer. */
	bool answered;
	uint32_t answer_index;	/* the connection asked on */
	unsigned int answer_ms;

	/* 2. Each connection (listed also with --quick, unmeasured). */
	bool conns_measured;
	unsigned int n_conns;
	struct probe_conn_result conns[PROBE_CONNS_MAX];

	/* 3. Path MTU, in plaintext bytes of an echo (a packet of the
	 * tunnel as long): the longest that came and the shortest lost
	 * twice (0: none), and the outer routes' MTU after (0: unknown).
	 */
	bool mtu_measured;
	unsigned int mtu_fits, mtu_lost, route_mtu;
	unsigned int outer_overhead;	/* an echo's outer packet beyond it */
	unsigned int mtu_asks;

	/* 4. Freeze: a pad on each of up to PROBE_FREEZE_CONNS connections
	 * in turn, while the last froze.
	 */
	const char *freeze_why;	/* why not measured, or NULL */
	unsigned int n_freeze;
	struct freeze_result freeze[PROBE_FREEZE_CONNS];

	/* 5. Resets: this end's counts and evidence, and the peer's. */
	bool resets_measured;
	uint64_t rst, fin;
	bool has_here, has_there;
	struct resets here;	/* peer_*: the peer's segments, here */
	struct resets there;	/* peer_*: this end's segments, at the peer */

	/* 6. Policing. */
	enum policing policing;
	const char *not_measured;	/* why, with POLICING_NOT_MEASURED */
	struct pad_result one;		/* one.granted 0: not run */
	struct pad_result all;		/* all.n 0: not run */

	/* 7. Loss. */
	unsigned int mtu;		/* this device's; 0 unknown */
	bool loss_measured;
	bool peer_loss_known;		/* FEC was active: the peer reports */
	uint32_t peer_loss_ppm;
	bool has_rebuilt;
	uint64_t rebuilt;

	/* 8. Reach: joins from fresh source ports, to each endpoint. */
	const char *reach_why;	/* why not measured, or NULL */
	const char *openings_why;	/* why openings were not, or NULL */
	unsigned int n_reach;
	struct reach_result reach[PROBE_REACH_MAX];

	/* The run. */
	double seconds;
	uint64_t bytes;

	/* probe_judge()'s */
	bool pad_loss_known;
	uint32_t pad_loss_ppm;
	unsigned int n_verdicts;
	struct probe_verdict verdicts[PROBE_VERDICTS_MAX];
	bool rec_flows, rec_fec;
	uint8_t rec_flows_n;
	bool rec_flows_at_peer;	/* the peer dials: flows goes there */
	bool rec_mtu;		/* the device's MTU, rec_mtu_n */
	unsigned int rec_mtu_n;
	bool rec_rotate;	/* rotate rec_rotate_n bytes */
	uint32_t rec_rotate_n;	/* or FTV_ROTATE_OFF */
	bool rec_endpoints;	/* endpoint: those of rec_list */
	struct endpoint_list rec_list;
	bool rec_shape;		/* the device's shape, rec_shape_on */
	bool rec_shape_on;
};

uint64_t pad_total(const struct pad_result *pad);
/* kbit/s of @bytes in @seconds; 0 for no time */
unsigned int pad_kbit(uint64_t bytes, double seconds);
/* Whether one connection brought at least 90 % of what was granted. */
bool pad_whole(const struct pad_result *one);
/*
 * The policing rule: @one, a pad on one connection; @all, the same spread
 * over every connection (n 0: not run, as after a whole @one).
 */
enum policing judge_policing(const struct pad_result *one,
			     const struct pad_result *all);
/*
 * What fell short of a pad of @granted bytes when @came bytes of payload
 * came, in ppm, counting a message's overhead for each @mtu bytes of it
 * (at least: the peer sends shorter ones too, so loss is never
 * overstated). @mtu 0: taken as 1420.
 */
uint32_t pad_loss_ppm(uint32_t granted, uint64_t came, unsigned int mtu);

/* Fills in the verdicts and the recommendation from what was measured. */
void probe_judge(struct probe_report *r);
/*
 * The arguments of `ftvctl peer set IFACE KEY` the verdicts recommend at
 * this end ("flows 4 fec auto"), or "" for none. Returns their length;
 * PROBE_ARGS_LEN holds the longest.
 */
#define PROBE_ARGS_LEN (64 + FTV_MAX_ENDPOINTS * (ENDPOINT_STRLEN + 1))
size_t probe_recommended(const struct probe_report *r, char *buf, size_t len);

/* The report's lines, as each measurement ends, or all at once. */
enum probe_part {
	PROBE_PART_ANSWER,
	PROBE_PART_CONNS,
	PROBE_PART_MTU,
	PROBE_PART_FREEZE,
	PROBE_PART_RESETS,
	PROBE_PART_POLICING,
	PROBE_PART_LOSS,
	PROBE_PART_REACH,
	PROBE_PART_END,		/* the run's cost and the recommendation */
};

void probe_print_part(const struct probe_report *r, enum probe_part part);
void probe_print_text(const struct probe_report *r);
void probe_print_json(const struct probe_report *r);

#endif

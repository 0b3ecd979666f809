// SPDX-License-Identifier: GPL-2.0
/*
 * monitor: one line per peer event, as it happens, for people or (with
 * --json) for programs; each line is flushed, so a pipe sees it at once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "encoding.h"
#include "ipc.h"
#include "parse.h"
#include "show.h"
#include "subcommands.h"
#include "util.h"

struct monitor_opts {
	const char *ifname;	/* NULL: every device */
	bool json;
};

/* A flow's event says in text how many flows are up; a flow given up,
 * how many were replaced. JSON lines always carry both.
 */
static const struct {
	const char *json;
	const char *text;
	bool flows_up;
	bool replaced;
} events[] = {
	[FTV_EVENT_ESTABLISHED] = { "established", "session established" },
	[FTV_EVENT_REKEYED] = { "rekeyed", "session rekeyed" },
	[FTV_EVENT_ENDPOINT_CHANGED] = { "endpoint_changed", "endpoint changed" },
	[FTV_EVENT_LOST] = { "lost", "session lost" },
	[FTV_EVENT_FLOW_UP] = { "flow_up", "flow up", true },
	[FTV_EVENT_FLOW_STALLED] = { "flow_stalled", "flow stalled", true, true },
	[FTV_EVENT_FLOW_ROTATED] = { "flow_rotated", "flow rotated", true, true },
	[FTV_EVENT_FAILOVER] = { "failover", "failed over" },
};

static bool event_known(uint8_t event)
{
	return event < sizeof(events) / sizeof(events[0]) && events[event].json;
}

/* " (4 flows up, 7 replaced, endpoint 192.0.2.1:443)", what is known of it */
static void print_details(const struct peer_event *ev, const char *ep)
{
	bool known = event_known(ev->event);
	const struct peer *peer = &ev->peer;
	const char *sep = " (";

	if (known && events[ev->event].flows_up &&
	    (peer->flags & PEER_HAS_FLOWS_UP)) {
		printf("%s%u flow%s up", sep, peer->flows_up,
		       peer->flows_up == 1 ? "" : "s");
		sep = ", ";
	}
	if (known && events[ev->event].replaced &&
	    (peer->flags & PEER_HAS_ROTATIONS)) {
		printf("%s%" PRIu64 " replaced", sep, peer->rotations);
		sep = ", ";
	}
	if (ep) {
		printf("%sendpoint %s", sep, ep);
		sep = ", ";
	}
	printf("%s\n", *sep == ',' ? ")" : "");
}

static void print_text(const struct peer_event *ev, const char *key,
		       const char *ep)
{
	printf("%s: peer %s: ", ev->ifname, key);
	if (event_known(ev->event))
		printf("%s", events[ev->event].text);
	else
		printf("event %u", ev->event);
	/* These two are about the endpoint: say where it is now. */
	if (ep && (ev->event == FTV_EVENT_ENDPOINT_CHANGED ||
		   ev->event == FTV_EVENT_FAILOVER))
		printf(" to %s\n", ep);
	else
		print_details(ev, ep);
}

static void print_json(const struct peer_event *ev, const char *key,
		       const char *ep)
{
	printf("{\"interface\": ");
	print_json_string(ev->ifname);
	printf(", \"event\": \"%s\", \"peer\": \"%s\", \"endpoint\": ",
	       event_known(ev->event) ? events[ev->event].json : "unknown",
	       key);
	if (ep)
		printf("\"%s\"", ep);
	else
		printf("null");
	printf(", \"flows_up\": ");
	if (ev->peer.flags & PEER_HAS_FLOWS_UP)
		printf("%u", ev->peer.flows_up);
	else
		printf("null");
	printf(", \"rotations\": ");
	if (ev->peer.flags & PEER_HAS_ROTATIONS)
		printf("%" PRIu64, ev->peer.rotations);
	else
		printf("null");
	printf(", \"time\": %lld}\n", (long long)time(NULL));
}

static int print_event(const struct peer_event *ev, void *arg)
{
	const struct monitor_opts *opts = arg;
	char key[KEY_B64_LEN + 1], ep[ENDPOINT_STRLEN];
	bool has_ep = ev->peer.flags & PEER_HAS_ENDPOINT;

	if (opts->ifname && strcmp(opts->ifname, ev->ifname))
		return 0;
	key_to_base64(key, ev->peer.public_key);
	if (has_ep)
		endpoint_to_string(ep, &ev->peer.endpoint);
	if (opts->json)
		print_json(ev, key, has_ep ? ep : NULL);
	else
		print_text(ev, key, has_ep ? ep : NULL);
	/* Nobody left to read: stop. */
	return finish_output() ? -1 : 0;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: %s monitor [<interface>] [--json]\n", PROG_NAME);
}

int monitor_main(int argc, char **argv)
{
	struct monitor_opts opts = { 0 };
	char name[IFNAMSIZ];
	int i;

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			opts.json = true;
		} else if (!opts.ifname) {
			if (!parse_ifname(name, argv[i]))
				return 1;
			opts.ifname = name;
		} else {
			usage(stderr);
			return 1;
		}
	}
	/* It only returns when something went wrong. */
	ipc_monitor(print_event, &opts);
	return 1;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the configuration file parser. Besides surviving
 * any input (under ASan and UBSan, leaks included), what it accepts must
 * come back the same through config_write() and a second read: showconf's
 * output is what setconf takes.
 *
 * Built with -DFTV_FUZZING, which keeps endpoint names numeric: no input
 * may wait on a resolver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "../config.h"
#include "../containers.h"
#include "../settings.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	/*
	 * Every refused input explains itself; libFuzzer and the sanitizers
	 * keep their own handles on the real standard error.
	 */
	stderr = fopen("/dev/null", "w");
	return 0;
}

static bool key_same(bool has_a, const uint8_t *a, bool has_b,
		     const uint8_t *b)
{
	static const uint8_t zero[FTV_KEY_LEN];

	return !memcmp(has_a ? a : zero, has_b ? b : zero, FTV_KEY_LEN);
}

/* The settings of one number each, as a file gives them: a value or
 * the default.
 */
static bool numbers_same(const struct peer *a, const struct peer *b)
{
	const struct setting_number *n;
	size_t i;

	for (i = 0; (n = setting_number(i)); i++)
		if (setting_number_value(n, a) != setting_number_value(n, b))
			return false;
	return true;
}

static bool peer_same(const struct peer *a, const struct peer *b)
{
	bool ep_a = a->flags & PEER_HAS_ENDPOINT;
	bool ep_b = b->flags & PEER_HAS_ENDPOINT;

	return !memcmp(a->public_key, b->public_key, FTV_KEY_LEN) &&
	       key_same(a->flags & PEER_HAS_PRESHARED_KEY, a->preshared_key,
			b->flags & PEER_HAS_PRESHARED_KEY, b->preshared_key) &&
	       ep_a == ep_b &&
	       (!ep_a || endpoint_equal(&a->endpoint, &b->endpoint)) &&
	       endpoint_list_equal(a->flags & PEER_HAS_ENDPOINTS ?
				   a->endpoints : NULL,
				   b->flags & PEER_HAS_ENDPOINTS ?
				   b->endpoints : NULL) &&
	       fec_equal(peer_fec(a), peer_fec(b)) && numbers_same(a, b) &&
	       peer_allowedips_equal(a, b) == 1;
}

/*
 * Values, not flags: "ListenPort = 0" is written as nothing. Shape is
 * written whenever it was given, so its flag must survive too.
 */
static bool device_same(const struct device *a, const struct device *b)
{
	const struct peer *pa, *pb;

	if (!key_same(a->flags & DEVICE_HAS_PRIVATE_KEY, a->private_key,
		      b->flags & DEVICE_HAS_PRIVATE_KEY, b->private_key) ||
	    a->listen_port != b->listen_port || a->fwmark != b->fwmark ||
	    (a->flags & DEVICE_HAS_SHAPE) != (b->flags & DEVICE_HAS_SHAPE) ||
	    a->shape != b->shape)
		return false;
	for (pa = a->first_peer, pb = b->first_peer; pa && pb;
	     pa = pa->next, pb = pb->next)
		if (!peer_same(pa, pb))
			return false;
	return !pa && !pb;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct device *dev, *again;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	dev = config_read(f, "input");
	fclose(f);
	if (!dev)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	config_write(f, dev);
	fclose(f);
	f = fmemopen(text, len, "r");
	again = f ? config_read(f, "written") : NULL;
	if (f)
		fclose(f);
	/* What was accepted and written must read back as the same. */
	if (!again || !device_same(dev, again))
		abort();
	devices_free(again);
	devices_free(dev);
	free(text);
	return 0;
}

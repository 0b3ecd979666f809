// SPDX-License-Identifier: GPL-2.0
/* Included at the end of replay.c in debug builds. */

struct replay_case {
	u64 counter;
	bool fresh;
};

static const struct replay_case replay_cases[] __initconst = {
	{ 0, true }, { 0, false }, { 1, true }, { 1, false }, { 9, true },
	{ 8, true }, { 7, true }, { 7, false },
	{ FTV_REPLAY_WINDOW + 9, true }, { 9, false }, { 10, true },
	{ 10, false }, { FTV_REPLAY_WINDOW * 3, true }, { 10, false },
	{ FTV_REPLAY_WINDOW * 2 + 1, true },
	{ FTV_REPLAY_WINDOW * 2, false },
	{ FTV_REPLAY_WINDOW * 3 + 1, true }, { FTV_REPLAY_WINDOW * 3 + 1, false },
	{ 1ULL << 40, true }, { (1ULL << 40) - 1, true },
	{ (1ULL << 40) - 2049, true }, { (1ULL << 40) - 2049, false },
};

/**
 * ftv_replay_selftest - check the window against known sequences
 *
 * Return: true if every case behaves as expected.
 */
bool __init ftv_replay_selftest(void)
{
	struct ftv_replay *replay;
	bool ok = true;
	size_t i;

	replay = kmalloc(sizeof(*replay), GFP_KERNEL);
	if (!replay)
		return false;
	ftv_replay_init(replay);
	for (i = 0; i < ARRAY_SIZE(replay_cases); ++i) {
		if (ftv_replay_check(replay, replay_cases[i].counter) !=
		    replay_cases[i].fresh) {
			pr_err("replay self-test %zu: failed\n", i + 1);
			ok = false;
		}
	}
	kfree(replay);
	if (ok)
		pr_info("replay self-tests: pass\n");
	return ok;
}

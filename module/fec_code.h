/* SPDX-License-Identifier: GPL-2.0 */

#ifndef _FTV_FEC_CODE_H
#define _FTV_FEC_CODE_H

#include <linux/ftv.h>
#include <linux/types.h>

/* The code's limits: data and repair blocks in one group, which are what
 * the netlink interface lets a user ask for.
 */
enum ftv_fec_code_limits {
	FTV_FEC_CODE_MAX_DATA = FTV_FEC_MAX_DATA,
	FTV_FEC_CODE_MAX_REPAIR = FTV_FEC_MAX_REPAIR,
};

int ftv_fec_code_init(void);
void ftv_fec_code_uninit(void);
void ftv_fec_code_encode(unsigned int k, unsigned int j, u8 *const data[],
			 const unsigned int len[], unsigned int block_len,
			 u8 *repair);
int ftv_fec_code_decode(unsigned int k, u8 *data[], const unsigned int len[],
			unsigned int block_len, const unsigned int repair_index[],
			u8 *const repair[], unsigned int nr_repair);

#ifdef DEBUG
bool ftv_fec_code_selftest(void);
#endif

#endif /* _FTV_FEC_CODE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The readv and writev variants of a fixture whose cases run once as
 * process_vm_readv() ("readv": variant->write false) and once as
 * process_vm_writev() ("writev": variant->write true).  After FIXTURE(name):
 *
 *	#define CMA_RW_FIXTURE name
 *	#include "cma_rw_variants.h"
 *
 * A macro would serve as well, but checkpatch takes the three declarations
 * it would hold for statements (and wants them in a do-while loop).  This
 * header is read once for each such fixture: it has no include guard.
 */
#ifndef CMA_RW_FIXTURE
#error "cma_rw_variants.h: define CMA_RW_FIXTURE to the name of the fixture first"
#endif

CMA_FIXTURE_VARIANT(CMA_RW_FIXTURE) {
	bool write;
};

CMA_FIXTURE_VARIANT_ADD(CMA_RW_FIXTURE, readv) {
	.write = false,
};

CMA_FIXTURE_VARIANT_ADD(CMA_RW_FIXTURE, writev) {
	.write = true,
};

#undef CMA_RW_FIXTURE

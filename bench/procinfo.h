/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CMA_BENCH_PROCINFO_H
#define CMA_BENCH_PROCINFO_H

/* AnonHugePages of this process in KiB, or -1 if /proc does not say. */
long anon_huge_kb(void);

#endif

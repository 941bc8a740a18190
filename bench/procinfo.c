// SPDX-License-Identifier: GPL-2.0
/*
 * procinfo: what /proc says about this process, shared by cmabench and
 * cma-ab.
 */
#include <stdio.h>

#include "procinfo.h"

long anon_huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

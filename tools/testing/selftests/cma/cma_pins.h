/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The system-wide FOLL_PIN counters, for the pin-balance checks of the CMA
 * fuzzer and churn tests: every pin taken must have been released.
 */
#ifndef CMA_PINS_H
#define CMA_PINS_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

/*
 * Read nr_foll_pin_acquired and nr_foll_pin_released from /proc/vmstat,
 * after asking the kernel to fold its per-CPU counters (@refreshed says
 * whether that worked).  Returns 0, or -1 if the counters were not found.
 */
static inline int cma_read_pins(long long *acq, long long *rel, bool *refreshed)
{
	char line[128];
	int fd, found = 0;
	FILE *f;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	*refreshed = fd >= 0 && write(fd, "1\n", 2) == 2;
	if (fd >= 0)
		close(fd);
	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "nr_foll_pin_acquired %lld", acq) == 1)
			found |= 1;
		else if (sscanf(line, "nr_foll_pin_released %lld", rel) == 1)
			found |= 2;
	}
	fclose(f);
	return found == 3 ? 0 : -1;
}

#endif /* CMA_PINS_H */

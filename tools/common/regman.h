/* SPDX-License-Identifier: MIT */
/*
 * regman.h - a manifest's counter sets as perflib registrations (lodctr, unlodctr,
 * kcounters and perflib-sysd), and the parsers of the pins' owner, group and mode options
 * those tools share (callbacks of their tool_parse tables, tools/common/tool.h).
 */
#ifndef REGMAN_H
#define REGMAN_H

#include <stdbool.h>

#include <perflib.h>
#include <perflib-linux.h>

#include "manifest.h"

/* the registrations of every counter set of @man (one array entry per counter set) */
struct regman {
	struct perflib_counterset_reg *sets;
	struct perflib_counter_reg *counters; /* all sets' counters, back to back */
	size_t nr_sets;
};

/* regman_build - fill @rm from @man; 0 or -ENOMEM. Strings point into @man. */
int regman_build(const struct manifest *man, struct regman *rm);
void regman_free(struct regman *rm);

/* parse an octal file mode (at most 0666), a user or a group name/number; 0 or -EINVAL */
int parse_mode(const char *s, mode_t *ret_mode);
int parse_user(const char *s, uid_t *ret_uid);
int parse_group(const char *s, gid_t *ret_gid);

#endif /* REGMAN_H */

// SPDX-License-Identifier: MIT
/*
 * opts.c - the growable option structs of perflib-linux.h (a size field first, as libbpf's
 * opts) and the PERFLIB_1.0 entry points that took them without one.
 */
#include <string.h>

#include "internal.h"

int perflib_pin_opts_read(const struct perflib_pin_opts *user, struct perflib_pin_opts *ret)
{
	size_t known = sizeof(*ret), i;

	memset(ret, 0, sizeof(*ret));
	ret->sz = sizeof(*ret);
	ret->uid = (uid_t)-1;
	ret->gid = (gid_t)-1;
	if (!user)
		return 0;
	if (user->sz < sizeof(user->sz))
		return -EINVAL;
	/* a newer caller's fields this library does not know must be unset */
	for (i = known; i < user->sz; i++)
		if (((const unsigned char *)user)[i])
			return -EINVAL;
	/* an older caller's struct ends early: the fields it lacks keep their defaults */
	if (user->sz < known)
		known = user->sz;
#define OPT(field)                                                                                 \
	do {                                                                                       \
		if (offsetof(struct perflib_pin_opts, field) + sizeof(ret->field) <= known)        \
			ret->field = user->field;                                                  \
	} while (0)
	OPT(mode);
	OPT(uid);
	OPT(gid);
	OPT(capacity);
	OPT(name_max);
#undef OPT
	return 0;
}

/* ---- the versioned entry points ------------------------------------------------------ */

/*
 * Each exported name has two versions: @@PERFLIB_1.1 (the default, options with sz) and
 * @PERFLIB_1.0 (what programs linked against 1.0 call: options without sz). libbpf's way.
 */
#define PERFLIB_SYMVER(impl, name, ver) __asm__(".symver " #impl "," #name ver)

PERFLIB_API int perflib_register_counterset_1_1(const struct perflib_counterset_reg *reg,
						const struct perflib_pin_opts *opts);
PERFLIB_API int perflib_counterset_layout_1_1(const struct perflib_counterset_reg *reg,
					      const struct perflib_pin_opts *opts,
					      struct perflib_layout *ret_layout);

int perflib_register_counterset_1_1(const struct perflib_counterset_reg *reg,
				    const struct perflib_pin_opts *opts)
{
	struct perflib_pin_opts sized;
	int err = perflib_pin_opts_read(opts, &sized);

	return err ? err : perflib_registry_register(reg, &sized);
}
PERFLIB_SYMVER(perflib_register_counterset_1_1, perflib_register_counterset, "@@PERFLIB_1.1");

int perflib_counterset_layout_1_1(const struct perflib_counterset_reg *reg,
				  const struct perflib_pin_opts *opts,
				  struct perflib_layout *ret_layout)
{
	struct perflib_pin_opts sized;
	int err = perflib_pin_opts_read(opts, &sized);

	return err ? err : perflib_layout_compute(reg, &sized, ret_layout);
}
PERFLIB_SYMVER(perflib_counterset_layout_1_1, perflib_counterset_layout, "@@PERFLIB_1.1");

int perflib_counterset_classes(const struct perflib_counterset_reg *reg,
			       const struct perflib_pin_opts *opts,
			       struct perflib_class_layout *ret, unsigned int n)
{
	struct perflib_pin_opts sized;
	int err = perflib_pin_opts_read(opts, &sized);

	return err ? err : perflib_classes_compute(reg, &sized, ret, n);
}

/* ---- PERFLIB_1.0: struct perflib_pin_opts had no sz ------------------------------------ */

struct perflib_pin_opts_1_0 {
	mode_t mode;
	uid_t uid;
	gid_t gid;
	unsigned int capacity;
	unsigned int name_max;
};

static const struct perflib_pin_opts *pin_opts_from_1_0(const struct perflib_pin_opts_1_0 *old,
							struct perflib_pin_opts *buf)
{
	if (!old)
		return NULL;
	memset(buf, 0, sizeof(*buf));
	buf->sz = sizeof(*buf);
	buf->mode = old->mode;
	buf->uid = old->uid;
	buf->gid = old->gid;
	buf->capacity = old->capacity;
	buf->name_max = old->name_max;
	return buf;
}

PERFLIB_API int perflib_register_counterset_1_0(const struct perflib_counterset_reg *reg,
						const struct perflib_pin_opts_1_0 *opts);
PERFLIB_API int perflib_counterset_layout_1_0(const struct perflib_counterset_reg *reg,
					      const struct perflib_pin_opts_1_0 *opts,
					      struct perflib_layout *ret_layout);

int perflib_register_counterset_1_0(const struct perflib_counterset_reg *reg,
				    const struct perflib_pin_opts_1_0 *opts)
{
	struct perflib_pin_opts buf;

	return perflib_register_counterset_1_1(reg, pin_opts_from_1_0(opts, &buf));
}
PERFLIB_SYMVER(perflib_register_counterset_1_0, perflib_register_counterset, "@PERFLIB_1.0");

int perflib_counterset_layout_1_0(const struct perflib_counterset_reg *reg,
				  const struct perflib_pin_opts_1_0 *opts,
				  struct perflib_layout *ret_layout)
{
	struct perflib_pin_opts buf;

	return perflib_counterset_layout_1_1(reg, pin_opts_from_1_0(opts, &buf), ret_layout);
}
PERFLIB_SYMVER(perflib_counterset_layout_1_0, perflib_counterset_layout, "@PERFLIB_1.0");

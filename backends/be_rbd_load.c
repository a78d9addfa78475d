/*
 * Loads the rbd backend's module (sbcemu-rbd.so: be_rbd.c with librbd and
 * librados) on first use, with dlopen(3), and keeps it loaded: the fenced
 * connections it keeps are never closed (be_rbd.c), so it is never unloaded.
 *
 * Where: $SBCEMU_RBD_MODULE when set; the build tree's module when the
 * running program lies in the build tree (SBCE_BINARY_DIR: a daemon run
 * from its build, the tests); else the installed one (SBCE_RBD_MODULE_INSTALLED,
 * under the library directory).  Called on the event loop's thread only.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

static const char *module_path(void)
{
	static char exe[PATH_MAX];
	const char *env = getenv("SBCEMU_RBD_MODULE");
	size_t dir = strlen(SBCE_BINARY_DIR);
	ssize_t n;

	if (env && env[0])
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && (size_t)n > dir && memcmp(exe, SBCE_BINARY_DIR, dir) == 0 && exe[dir] == '/')
		return SBCE_RBD_MODULE_BUILT;
	return SBCE_RBD_MODULE_INSTALLED;
}

const struct be_rbd_entry *be_rbd_module(char *err, size_t errlen)
{
	static const struct be_rbd_entry *entry;
	const char *path;
	void *handle;

	if (entry)
		return entry;
	path = module_path();
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		snprintf(err, errlen, "backend rbd: cannot load its module: %s", dlerror());
		return NULL;
	}
	entry = dlsym(handle, BE_RBD_ENTRY_SYMBOL);
	if (!entry) {
		snprintf(err, errlen, "backend rbd: %s is not sbcemu's rbd module (no %s)", path, BE_RBD_ENTRY_SYMBOL);
		dlclose(handle);
	}
	return entry;
}

/*
 * Loads the rbd backend's module (sbcemu-rbd.so: be_rbd.c with librbd and
 * librados) on first use, with dlopen(3), and keeps it loaded: the fenced
 * connections it keeps are never closed (be_rbd.c), so it is never unloaded.
 *
 * Where: $SBCEMU_RBD_MODULE when set; the build tree's module when the
 * running program lies in the build tree (SBCE_BINARY_DIR: a daemon run
 * from its build, the tests); else the installed one, under the library
 * directory of the prefix the program is installed in (SBCE_RBD_MODULE_INSTALLED,
 * relative to the prefix: /usr/sbin/sbcemud loads
 * /usr/lib/<triplet>/sbcemu/sbcemu-rbd.so), so that `cmake --install --prefix`
 * may choose the prefix after the build.  Called on the event loop's thread only.
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
	static char exe[PATH_MAX], installed[PATH_MAX + sizeof(SBCE_RBD_MODULE_INSTALLED)];
	const char *env = getenv("SBCEMU_RBD_MODULE");
	size_t dir = strlen(SBCE_BINARY_DIR);
	char *slash;
	ssize_t n;

	if (env && env[0])
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && (size_t)n > dir && memcmp(exe, SBCE_BINARY_DIR, dir) == 0 && exe[dir] == '/')
		return SBCE_RBD_MODULE_BUILT;
	if (SBCE_RBD_MODULE_INSTALLED[0] == '/') /* an absolute CMAKE_INSTALL_LIBDIR */
		return SBCE_RBD_MODULE_INSTALLED;
	if (n <= 0)
		return "/usr/" SBCE_RBD_MODULE_INSTALLED;
	exe[n] = '\0';
	/* PREFIX/sbin/sbcemud -> PREFIX */
	for (int up = 0; up < 2 && (slash = strrchr(exe, '/')); up++)
		*slash = '\0';
	snprintf(installed, sizeof(installed), "%s/%s", exe, SBCE_RBD_MODULE_INSTALLED);
	return installed;
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

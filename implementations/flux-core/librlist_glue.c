/*
 * librlist_glue.c: what the librlist adapter cannot reach through ctypes.
 *
 * This file is flux-conformance's own code; it contains no copy of flux-core.
 * build_librlist.sh links it, with flux-core's librlist (a static library that
 * flux-core builds for its own modules and never installs), into one shared
 * object that runner/adapters/thirdparty/fluxcore_librlist.py loads.
 *
 *   fcl_json_decref()   jansson's json_decref() is an inline function of
 *                       jansson.h, not a symbol ctypes can call;
 *   fcl_rlist_set_times()
 *                       an R's starttime and expiration live in two fields of
 *                       the public struct rlist (rlist.h), which flux-core's
 *                       own callers assign directly (no setter exists); this
 *                       assigns them the same way, so that rlist_encode()
 *                       writes them;
 *   fcl_flux_core_version()
 *                       flux_core_version_string() of the libflux-core this
 *                       object is linked with, so that the adapter reports the
 *                       version of the code it runs.
 */

#include <jansson.h>
#include <flux/core.h>

#include "src/common/librlist/rlist.h"

void fcl_json_decref (json_t *o)
{
    json_decref (o);
}

void fcl_rlist_set_times (struct rlist *rl, double starttime, double expiration)
{
    rl->starttime = starttime;
    rl->expiration = expiration;
}

const char *fcl_flux_core_version (void)
{
    return flux_core_version_string ();
}

/*
 * view_so.c - libdssm.so reads MCAP files in place (view.h): the shared
 * library carries the views (and so depends on liblz4, libzstd, libbz2 and
 * zlib) and registers them when it is loaded, so that every program and
 * binding using it (Python's dssm.Recording, dssm_open_address of
 * "x.mcap/TOPIC") takes MCAP files. Not in libdssm.a: a static program
 * that wants them links the views and calls dssm__mcap_view_register, and
 * one that does not (the cross-built tests) needs none of those libraries.
 */
#include "view.h"

__attribute__((constructor)) static void views_on(void)
{
	dssm__mcap_view_register();
}

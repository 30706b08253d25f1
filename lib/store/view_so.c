/*
 * view_so.c - libdssm.so reads foreign files in place (view.h, views.c): the shared
 * library carries the views (and so depends on liblz4, libzstd, libbz2 and
 * zlib) and registers them when it is loaded, so that every program and
 * binding using it (Python's dssm.Recording, dssm_open_address of
 * "x.mcap/TOPIC") takes them. Not in libdssm.a: a static program
 * that wants them links the views and calls dssm__views_register, and
 * one that does not (the cross-built tests) needs none of those libraries.
 */
#include "view.h"

__attribute__((constructor)) static void views_on(void)
{
	dssm__views_register();
}

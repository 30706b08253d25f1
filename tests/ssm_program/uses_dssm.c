/* uses_dssm.c - a program built against the installed libdssm via pkg-config. */
#include <stdio.h>
#include <dssm/dssm.h>

int main(void)
{
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = 16;
	cfg.slots = 8;
	dssm_stream *s;
	if (dssm_create("installed", 0, &cfg, &s) < 0 || dssm_write(s, "hi", 2, dssm_now()) != 0) {
		fprintf(stderr, "uses_dssm: %s\n", dssm_last_error());
		return 1;
	}
	dssm_close(s);
	dssm_remove("installed", 0);
	printf("uses_dssm: OK\n");
	return 0;
}

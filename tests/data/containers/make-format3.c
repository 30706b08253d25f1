/* make-format3.c - writes tests/data/containers/format3-mixed (README.md) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dssm/container.h"
static void fill(unsigned char *p, size_t len, int s, unsigned long long k)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)((k + (unsigned long long)s * 3 + i / 64) & 0xff);
}
static dssm_stream_info info_of(const char *name)
{
	dssm_stream_info i;
	memset(&i, 0, sizeof i);
	snprintf(i.name, sizeof i.name, "%s", name);
	snprintf(i.type, sizeof i.type, "test/%s", name);
	snprintf(i.encoding, sizeof i.encoding, "raw");
	i.max_size = 400000;
	i.slots = 100;
	return i;
}
int main(int argc, char **argv)
{
	dssm_container *c;
	static unsigned char buf[400000];
	if (dssm_container_create(argv[1], &c)) { fprintf(stderr, "%s\n", dssm_last_error()); return 1; }
	dssm_container_set_sync(c, 3600LL * 1000000000LL);
	const char *names[4] = {"imu", "odom", "lidar", "big"};
	const char *codec[4] = {"zstd", "none", "lz4", "zstd"};
	for (int s = 0; s < 4; s++) {
		dssm_stream_info a = info_of(names[s]);
		if (dssm_container_set_compress(c, codec[s], 0) || dssm_container_add_stream(c, &a, NULL, NULL, 0) != s) {
			fprintf(stderr, "%s\n", dssm_last_error()); return 1; }
	}
	for (int k = 0; k < 1000; k++) {
		for (int s = 0; s < 3; s++) {
			if (s == 1 && k >= 100) continue;
			size_t len = 200 + (size_t)(k * 7 + s) % 1800;
			fill(buf, len, s, k);
			if (dssm_container_append(c, s, (unsigned long long)k, 1000 + 10 * k + s, buf, len)) return 2;
		}
		if (k % 100 == 50) {
			size_t len = 300000 + k;
			fill(buf, len, 3, k);
			if (dssm_container_append(c, 3, (unsigned long long)k, 1000 + 10 * k + 3, buf, len)) return 2;
		}
		if (k % 250 == 249 && dssm_container_sync(c)) return 3;
	}
	if (dssm_container_close(c)) { fprintf(stderr, "%s\n", dssm_last_error()); return 4; }
	return 0;
}

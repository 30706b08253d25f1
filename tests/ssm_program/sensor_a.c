/*
 * sensor_a.c - a program written against SSM 1.0.6's C API, the way SSM's
 * own samples are (a handler that writes, a reader that reads by time).
 * It must build unchanged against dssm's installed ssm.h and -lssm.
 */
#include <stdio.h>
#include <ssm.h>

typedef struct {
	int num;
	double value;
} SensorA;

#define SNAME_SENSOR_A "sensor_a"

int main(void)
{
	SSM_sid sid, rsid;
	SensorA data, got;
	ssmTimeT t, base;
	int i;

	if (!initSSM()) {
		errSSM();
		return 1;
	}
	sid = createSSM_time(SNAME_SENSOR_A, 0, sizeof(SensorA), 1.0, 0.01);
	if (!sid) {
		errSSM();
		return 1;
	}
	base = gettimeSSM();
	for (i = 0; i < 150; i++) {
		data.num = i;
		data.value = i * 0.5;
		writeSSM(sid, (char *)&data, base + i * 0.01);
	}
	rsid = openSSM(SNAME_SENSOR_A, 0, SSM_READ);
	if (!rsid) {
		errSSM();
		return 1;
	}
	if (readSSM_time(rsid, (char *)&got, base + 1.234, &t) < 0 || got.num != 123) {
		fprintf(stderr, "readSSM_time gave %d\n", got.num);
		return 1;
	}
	if (getTID_bottom(rsid) != 149 - 121 + 2 || getTID_top(rsid) != 149) {
		fprintf(stderr, "tid range %d..%d\n", getTID_bottom(rsid), getTID_top(rsid));
		return 1;
	}
	closeSSM(&rsid);
	releaseSSM(&sid);
	endSSM();
	printf("sensor_a: OK (tid range 30..149, readSSM_time found #123)\n");
	return 0;
}

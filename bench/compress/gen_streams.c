/*
 * gen_streams.c - realistic synthetic sensor streams for the compression
 * benchmark (bench/compress/run.sh, issue #28), written into rings in real
 * time as a robot's drivers write them. Compression ratios measured on a
 * repeated pattern prove nothing (bench/bridge's generated images compress
 * 5500x), so every sample here is a new measurement of a moving scene with
 * sensor noise:
 *   PREFIXlidar   10 Hz: a 32-beam rotating scanner, 1024 azimuth steps,
 *                 float32 x, y, z, intensity per point (512 KiB a scan),
 *                 ray-cast in a room with poles and boxes while it drives;
 *                 ranges carry 2 cm Gaussian noise; no return is NaN, as
 *                 an organized cloud has it
 *   PREFIXimu     400 Hz: sensor_msgs/Imu's fields as float64 (orientation,
 *                 angular velocity, linear acceleration and their constant
 *                 covariances, as drivers send them), a smooth motion with
 *                 vibration and gyro/accelerometer noise
 *   PREFIXcamera  15 Hz: 640x480 mono8, smooth gradients and shapes that
 *                 pan with the robot, vignetting, shot and read noise
 * Samples carry the time they were due (wall clock), so a late write does
 * not make the rate jitter. Usage: see usage below.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dssm/dssm.h"
#include "lib/base/base.h"
#include "bench/args.h"

static const char usage[] =
	"usage: gen_streams [--seconds S] [--prefix P] [--seed N]\n"
	"  Writes three realistic synthetic sensor streams into rings, paced in real\n"
	"  time, for S seconds (default 30): Plidar (10 Hz, 32x1024 float32 points\n"
	"  x,y,z,intensity of a scanner driving through a room, 2 cm range noise),\n"
	"  Pimu (400 Hz, noisy float64 sensor_msgs/Imu fields) and Pcamera (15 Hz,\n"
	"  640x480 mono8 gradients and shapes panning, with sensor noise). No two\n"
	"  samples repeat. The rings stay after it exits (remove them with dssm rm).\n"
	"example:\n"
	"  gen_streams --seconds 20 & dssm record -o run --all --duration 22\n";

#define LIDAR_BEAMS 32
#define LIDAR_STEPS 1024
#define CAM_W 640
#define CAM_H 480
#define N_POLES 10
#define N_BOXES 5

/* ---- noise: xorshift64*, a fast near-Gaussian and an exact one ---------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static double rng_uniform(void)
{
	return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* Sum of four uniforms, scaled to unit variance: close to a Gaussian and
 * cheap enough for every pixel and point. */
static float gauss_fast(void)
{
	uint64_t r = rng_next();
	unsigned s = (unsigned)(r & 0xffff) + (unsigned)((r >> 16) & 0xffff) +
	             (unsigned)((r >> 32) & 0xffff) + (unsigned)(r >> 48);
	return ((float)s / 65536.0f - 2.0f) * 1.7320508f;
}

/* Box-Muller, for the IMU's float64 fields. */
static double gauss(void)
{
	double u = rng_uniform(), v = rng_uniform();
	return sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * M_PI * v);
}

/* ---- the LiDAR: rays cast into a room with poles and boxes -------------- */

struct pole {
	double x, y, r;
};
struct box {
	double x0, y0, x1, y1, h;
};
static struct pole poles[N_POLES];
static struct box boxes[N_BOXES];
static const double room_x = 25, room_y = 8, wall_h = 3.5;

static void scene_init(void)
{
	for (int i = 0; i < N_POLES; i++)
		poles[i] = (struct pole){-22 + 4.6 * i + rng_uniform(), (i % 2 ? 1 : -1) * (3 + 3 * rng_uniform()),
		                         0.1 + 0.3 * rng_uniform()};
	for (int i = 0; i < N_BOXES; i++) {
		double x = -20 + 9 * i + 2 * rng_uniform(), y = (i % 2 ? 4.5 : -6.5) + rng_uniform();
		boxes[i] = (struct box){x, y, x + 1 + 2 * rng_uniform(), y + 1 + rng_uniform(), 0.5 + rng_uniform()};
	}
}

/* Nearest hit of the ray o + t d (t > 0): its distance and the surface's
 * reflectivity; t = INFINITY for none. */
static double cast(const double o[3], const double d[3], double *refl)
{
	double best = INFINITY;
	*refl = 0;
	if (d[2] < -1e-9 && -o[2] / d[2] < best) /* the floor */
		best = -o[2] / d[2], *refl = 0.25;
	for (int a = 0; a < 2; a++) /* the walls, x then y */
		if (fabs(d[a]) > 1e-9) {
			double lim = a ? room_y : room_x;
			double t = ((d[a] > 0 ? lim : -lim) - o[a]) / d[a];
			if (t < best && o[2] + t * d[2] < wall_h)
				best = t, *refl = a ? 0.55 : 0.6;
		}
	for (int i = 0; i < N_POLES; i++) {
		double px = o[0] - poles[i].x, py = o[1] - poles[i].y;
		double A = d[0] * d[0] + d[1] * d[1], B = 2 * (px * d[0] + py * d[1]);
		double C = px * px + py * py - poles[i].r * poles[i].r, disc = B * B - 4 * A * C;
		if (A < 1e-12 || disc < 0)
			continue;
		double t = (-B - sqrt(disc)) / (2 * A);
		if (t > 0 && t < best)
			best = t, *refl = 0.9;
	}
	for (int i = 0; i < N_BOXES; i++) { /* slabs */
		const struct box *b = &boxes[i];
		double lo[3] = {b->x0, b->y0, 0}, hi[3] = {b->x1, b->y1, b->h}, t0 = 0, t1 = best;
		for (int a = 0; a < 3 && t0 <= t1; a++) {
			if (fabs(d[a]) < 1e-12) {
				if (o[a] < lo[a] || o[a] > hi[a])
					t1 = -1;
				continue;
			}
			double ta = (lo[a] - o[a]) / d[a], tb = (hi[a] - o[a]) / d[a];
			if (ta > tb) {
				double s = ta;
				ta = tb, tb = s;
			}
			t0 = ta > t0 ? ta : t0, t1 = tb < t1 ? tb : t1;
		}
		if (t0 <= t1 && t0 > 0 && t0 < best)
			best = t0, *refl = 0.4;
	}
	return best;
}

/* One scan at time t (seconds from the start), in the scanner's frame. */
static void lidar_scan(float *pts, double t)
{
	double o[3] = {-18 + 0.8 * t, 1.5 * sin(0.1 * t), 1.0};
	double yaw = 0.2 * sin(0.05 * t), spin = fmod(t * 0.37, 1.0) * 2 * M_PI;
	for (int s = 0; s < LIDAR_STEPS; s++) {
		double az = spin + 2 * M_PI * s / LIDAR_STEPS;
		for (int b = 0; b < LIDAR_BEAMS; b++) {
			double el = (-16.0 + b) * M_PI / 180;
			double local[3] = {cos(el) * cos(az), cos(el) * sin(az), sin(el)};
			double d[3] = {local[0] * cos(yaw) - local[1] * sin(yaw),
			               local[0] * sin(yaw) + local[1] * cos(yaw), local[2]}, refl;
			double r = cast(o, d, &refl);
			float *p = pts + 4 * ((size_t)s * LIDAR_BEAMS + (size_t)b);
			if (!(r < 100)) {
				p[0] = p[1] = p[2] = NAN, p[3] = 0;
				continue;
			}
			r += 0.02 * gauss_fast();
			double inten = 255 * refl * (0.6 + 0.4 * fabs(local[2])) / (1 + 0.02 * r);
			inten += 3 * gauss_fast();
			p[0] = (float)(r * local[0]), p[1] = (float)(r * local[1]), p[2] = (float)(r * local[2]);
			p[3] = (float)floor(inten < 0 ? 0 : inten > 255 ? 255 : inten);
		}
	}
}

/* ---- the IMU -------------------------------------------------------------- */

struct imu {
	uint64_t seq;
	double orientation[4], orientation_cov[9];
	double angular_velocity[3], angular_velocity_cov[9];
	double linear_acceleration[3], linear_acceleration_cov[9];
};

static void imu_sample(struct imu *m, uint64_t seq, double t, double *yaw)
{
	const double dt = 1.0 / 400;
	double wz = 0.3 * sin(0.2 * t) + 0.02 * sin(2 * M_PI * 23 * t);
	*yaw += wz * dt;
	double roll = 0.01 * sin(2 * M_PI * 11 * t) + 0.002 * gauss();
	double pitch = 0.015 * sin(0.7 * t) + 0.002 * gauss();
	memset(m, 0, sizeof *m);
	m->seq = seq;
	/* roll, pitch, yaw to a quaternion (x, y, z, w) */
	double cr = cos(roll / 2), sr = sin(roll / 2), cp = cos(pitch / 2), sp = sin(pitch / 2);
	double cy = cos(*yaw / 2), sy = sin(*yaw / 2);
	m->orientation[0] = sr * cp * cy - cr * sp * sy;
	m->orientation[1] = cr * sp * cy + sr * cp * sy;
	m->orientation[2] = cr * cp * sy - sr * sp * cy;
	m->orientation[3] = cr * cp * cy + sr * sp * sy;
	m->angular_velocity[0] = 0.03 * cos(2 * M_PI * 11 * t) + 0.005 * gauss();
	m->angular_velocity[1] = 0.01 * cos(0.7 * t) + 0.005 * gauss();
	m->angular_velocity[2] = wz + 0.005 * gauss();
	m->linear_acceleration[0] = 0.5 * sin(0.3 * t) + 0.03 * gauss();
	m->linear_acceleration[1] = 0.8 * wz + 0.03 * gauss();
	m->linear_acceleration[2] = 9.80665 + 0.2 * sin(2 * M_PI * 23 * t) + 0.05 * gauss();
	for (int i = 0; i < 3; i++) {
		m->orientation_cov[4 * i] = 1e-4;
		m->angular_velocity_cov[4 * i] = 2.5e-5;
		m->linear_acceleration_cov[4 * i] = 2.5e-3;
	}
}

/* ---- the camera ----------------------------------------------------------- */

static void camera_frame(uint8_t *img, double t)
{
	static float col[CAM_W], row[CAM_H];
	double pan = 40 * t + 25 * sin(0.4 * t), tilt = 6 * sin(0.3 * t);
	for (int x = 0; x < CAM_W; x++)
		col[x] = (float)(55 * sin(0.0045 * (x + pan)) + 20 * sin(0.013 * (x + pan) + 1));
	for (int y = 0; y < CAM_H; y++)
		row[y] = (float)(70 + 0.12 * (y + tilt) + 25 * cos(0.007 * (y + tilt)));
	for (int y = 0; y < CAM_H; y++) {
		float dy = (float)(y - CAM_H / 2) / (CAM_H / 2);
		for (int x = 0; x < CAM_W; x++) {
			float dx = (float)(x - CAM_W / 2) / (CAM_W / 2);
			float v = row[y] + col[x];
			/* shapes: a window and a door that pan with the scene */
			int sx = (int)((x + (int)pan) % 900);
			if (sx > 200 && sx < 330 && y + tilt > 80 && y + tilt < 200)
				v += 70;
			if (sx > 600 && sx < 700 && y + tilt > 220)
				v -= 45;
			v *= 1.0f - 0.3f * (dx * dx + dy * dy); /* vignetting */
			v += (0.25f * sqrtf(v > 0 ? v : 0) + 1.5f) * gauss_fast(); /* shot + read noise */
			img[(size_t)y * CAM_W + (size_t)x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lrintf(v));
		}
	}
}

/* ---- rings and pacing ----------------------------------------------------- */

static dssm_stream *make_ring(const char *prefix, const char *what, size_t size, double hz,
                              const char *type)
{
	char name[DSSM_NAME_MAX + 1];
	snprintf(name, sizeof name, "%s%s", prefix, what);
	dssm_stream_config cfg = DSSM_STREAM_CONFIG_INIT;
	cfg.max_size = size;
	cfg.life = 2.0;
	cfg.cycle = 1.0 / hz;
	cfg.type = type;
	cfg.encoding = "raw";
	dssm_stream *s;
	if (dssm_create(name, 0, &cfg, &s) < 0) {
		fprintf(stderr, "gen_streams: %s: %s\n", name, dssm_last_error());
		exit(1);
	}
	return s;
}

static void write_or_die(dssm_stream *s, const void *buf, size_t len, dssm_time_t t)
{
	if (dssm_write(s, buf, len, t) < 0) {
		fprintf(stderr, "gen_streams: write: %s\n", dssm_last_error());
		exit(1);
	}
}

/* Every stream's samples at their rates for `seconds`, the earliest due first. */
static void run(const char *prefix, double seconds)
{
	const double hz[3] = {10, 400, 15};
	size_t size[3] = {(size_t)LIDAR_STEPS * LIDAR_BEAMS * 16, sizeof(struct imu), CAM_W * CAM_H};
	dssm_stream *ring[3] = {make_ring(prefix, "lidar", size[0], hz[0], "bench/LidarXYZI"),
	                        make_ring(prefix, "imu", size[1], hz[1], "bench/Imu"),
	                        make_ring(prefix, "camera", size[2], hz[2], "bench/Mono8")};
	void *buf = malloc(size[0] > size[2] ? size[0] : size[2]);
	if (!buf)
		exit(1);
	int64_t m0 = dssm__monotonic(), due[3] = {m0, m0, m0}, end = m0 + (int64_t)(seconds * 1e9);
	dssm_time_t r0 = dssm_now();
	uint64_t n[3] = {0, 0, 0};
	double yaw = 0;
	for (;;) {
		int k = 0;
		for (int i = 1; i < 3; i++)
			if (due[i] < due[k])
				k = i;
		if (due[k] >= end)
			break;
		struct timespec ts = {(time_t)(due[k] / 1000000000), (long)(due[k] % 1000000000)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		double t = (double)(due[k] - m0) * 1e-9;
		if (k == 0)
			lidar_scan(buf, t);
		else if (k == 1)
			imu_sample(buf, n[1], t, &yaw);
		else
			camera_frame(buf, t);
		write_or_die(ring[k], buf, size[k], r0 + (dssm_time_t)(due[k] - m0));
		n[k]++;
		due[k] = m0 + (int64_t)((double)n[k] * 1e9 / hz[k]);
	}
	printf("gen_streams: %llu lidar scans, %llu imu samples, %llu camera frames\n",
	       (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2]);
	for (int i = 0; i < 3; i++)
		dssm_close(ring[i]);
	free(buf);
}

int main(int argc, char **argv)
{
	bench_help(argc, argv, usage);
	double seconds = 30;
	const char *prefix = "";
	for (int i = 1; i < argc; i++) {
		int valued = !strcmp(argv[i], "--seconds") || !strcmp(argv[i], "--prefix") || !strcmp(argv[i], "--seed");
		if (valued && i + 1 == argc) {
			fprintf(stderr, "gen_streams: %s needs a value (try --help)\n", argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--prefix") && i + 1 < argc)
			prefix = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			rng_state ^= strtoull(argv[++i], NULL, 0) * 0x9E3779B97F4A7C15ull;
		else
			bench_refuse("gen_streams", argv[i]);
	}
	if (!(seconds > 0 && seconds <= 86400)) {
		fprintf(stderr, "gen_streams: --seconds must be > 0 and at most 86400\n");
		return 2;
	}
	if (!rng_state)
		rng_state = 1;
	scene_init();
	run(prefix, seconds);
	return 0;
}

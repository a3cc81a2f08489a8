/*
 * What an all-reduce schedule costs in C on this machine, beside MPI_Allreduce (issue 16): the
 * floor under cclab's ring and recursive doubling on the MPI fast path, with nothing of cclab,
 * Node or JavaScript around them. Each schedule is the one algorithms/allreduce/ring.ts and
 * recursive_doubling.ts compile to (ring: n - 1 reduce-scatter steps receiving into scratch and
 * reducing into the output, n - 1 all-gather steps; recursive doubling: copy, then log2 n
 * exchanges of the whole vector, each reduced), and each step waits as the fast path does
 * (MPI_Testsome over the step's send and receive; when the ranks outnumber the cores, a wait
 * that has spun `yield-after` µs without a completion yields between tries: 100 µs, the fast
 * path's budget, by default; 0 yields on every empty test, as the fast path once did). float32
 * sum; recursive doubling only where n is a power of two. Every schedule's result is checked.
 * Median over 9 repetitions of `calls` back-to-back calls after a barrier (each the slowest
 * rank's), µs per call, printed by rank 0. Then, per schedule, every call timed on its own (each
 * rank's own clock, issue 26): min, median, p99, max and mean per call and the mean over the
 * median, the slowest rank's, and how much of the time went to calls over 5x the median: what
 * the machine itself does to a spinning loop, with no Node, V8 or cclab in it.
 * Not a test: build and run it, say the load with it.
 *   mpicc -O2 -o build/schedule-floor test/perf/schedule-floor.c
 *   mpirun --oversubscribe -np 4 build/schedule-floor [bytes = 1024] [calls = 20000] [yield-after µs = 100]
 *       [sleep-after µs = -1: never] [sleep µs = 20]
 * sleep-after: a wait idle that long sleeps (nanosleep) between tests instead of spinning or
 * yielding, so its core is free for a peer the kernel took off the CPU.
 */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int yield_cpu;
static double yield_after_us = 100;
/* A wait idle this long sleeps (nanosleep, `sleep_us`) between tests, so its core is free for a descheduled peer; < 0: never. */
static double sleep_after_us = -1;
static long sleep_us = 20;

static void wait_step(MPI_Request* q) {
  int left = 2, done, idx[2];
  MPI_Status st[2];
  double idle_since = MPI_Wtime();
  while (left > 0) {
    MPI_Testsome(2, q, &done, idx, st);
    if (done != MPI_UNDEFINED && done > 0) {
      left -= done;
      idle_since = MPI_Wtime();
    } else if (sleep_after_us >= 0 && (MPI_Wtime() - idle_since) * 1e6 >= sleep_after_us) {
      struct timespec ts = {0, sleep_us * 1000};
      nanosleep(&ts, NULL);
    } else if (yield_cpu && (MPI_Wtime() - idle_since) * 1e6 >= yield_after_us) {
      sched_yield();
    }
  }
}

static void exchange(float* send, float* recv, int count, int to, int from) {
  MPI_Request q[2];
  MPI_Irecv(recv, count * 4, MPI_BYTE, from, 0, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(send, count * 4, MPI_BYTE, to, 0, MPI_COMM_WORLD, &q[1]);
  wait_step(q);
}

/* Chunk c of `count` elements split in n: [first, first + len). */
static void chunk(int count, int n, int c, int* first, int* len) {
  int base = count / n, extra = count % n;
  *first = c * base + (c < extra ? c : extra);
  *len = base + (c < extra ? 1 : 0);
}

static void ring(const float* in, float* out, float* scratch, int count, int rank, int n) {
  int next = (rank + 1) % n, prev = (rank + n - 1) % n, f, l, rf, rl;
  if (n == 1) {
    memcpy(out, in, (size_t)count * 4);
    return;
  }
  for (int s = 0; s < n - 1; s++) {
    int send = (rank - s + n) % n, recv = (rank - s - 1 + n) % n;
    chunk(count, n, send, &f, &l);
    chunk(count, n, recv, &rf, &rl);
    exchange((float*)(s == 0 ? in : out) + f, scratch, l, next, prev);
    const float* a = in + rf;
    for (int i = 0; i < rl; i++) out[rf + i] = a[i] + scratch[i];
  }
  for (int s = 0; s < n - 1; s++) {
    int send = (rank + 1 - s + n) % n, recv = (rank - s + n) % n;
    chunk(count, n, send, &f, &l);
    chunk(count, n, recv, &rf, &rl);
    MPI_Request q[2];
    MPI_Irecv(out + rf, rl * 4, MPI_BYTE, prev, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(out + f, l * 4, MPI_BYTE, next, 0, MPI_COMM_WORLD, &q[1]);
    wait_step(q);
  }
}

static void recursive_doubling(const float* in, float* out, float* scratch, int count, int rank, int n) {
  memcpy(out, in, (size_t)count * 4);
  for (int m = 1; m < n; m <<= 1) {
    exchange(out, scratch, count, rank ^ m, rank ^ m);
    for (int i = 0; i < count; i++) out[i] += scratch[i];
  }
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Per-call figures of this rank's `m` call times (sorted in place), µs: min, median, p99, max, mean, share of time in calls over 5x the median. */
static void per_call(double* us, int m, double out[6]) {
  double total = 0, slow = 0;
  for (int i = 0; i < m; i++) total += us[i];
  qsort(us, m, sizeof(double), cmp);
  double med = us[m / 2];
  for (int i = 0; i < m; i++)
    if (us[i] > 5 * med) slow += us[i];
  out[0] = us[0];
  out[1] = med;
  out[2] = us[(int)(0.99 * m) < m ? (int)(0.99 * m) : m - 1];
  out[3] = us[m - 1];
  out[4] = total / m;
  out[5] = slow / total;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long bytes = argc > 1 ? atol(argv[1]) : 1024;
  int calls = argc > 2 ? atoi(argv[2]) : 20000;
  if (argc > 3) yield_after_us = atof(argv[3]);
  if (argc > 4) sleep_after_us = atof(argv[4]);
  if (argc > 5) sleep_us = atol(argv[5]);
  if (bytes < 4 || calls < 1 || yield_after_us < 0) {
    if (rank == 0) fprintf(stderr, "schedule-floor [bytes >= 4] [calls >= 1] [yield-after µs >= 0]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  yield_cpu = (local ? atoi(local) : n) > sysconf(_SC_NPROCESSORS_ONLN);
  int count = (int)(bytes / 4);
  float* in = malloc((size_t)count * 4);
  float* out = malloc((size_t)count * 4);
  float* scratch = malloc((size_t)count * 4);
  for (int i = 0; i < count; i++) in[i] = (float)(rank + i % 7);
  const char* names[3] = {"MPI_Allreduce", "ring", "recursive_doubling"};
  double median[3] = {0, 0, 0};
  double calls_us[3][6];
  double* each = malloc(sizeof(double) * (size_t)calls * 9);
  int pow2 = (n & (n - 1)) == 0;
  for (int k = 0; k < 3; k++) {
    if (k == 2 && !pow2) continue;
    double t[9];
    for (int r = -1; r < 9; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      double last = t0;
      for (int i = 0; i < calls; i++) {
        if (k == 0) MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (k == 1) ring(in, out, scratch, count, rank, n);
        else recursive_doubling(in, out, scratch, count, rank, n);
        double now = MPI_Wtime();
        if (r >= 0) each[(size_t)r * calls + i] = (now - last) * 1e6;
        last = now;
      }
      double mine = (MPI_Wtime() - t0) / calls, slowest;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0) t[r] = slowest;
    }
    qsort(t, 9, sizeof(double), cmp);
    median[k] = t[4] * 1e6;
    double mine[6];
    per_call(each, calls * 9, mine);
    /* The rank whose mean is furthest over its median speaks for the run. */
    struct {
      double ratio;
      int rank;
    } me = {mine[4] / mine[1], rank}, worst;
    MPI_Allreduce(&me, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    if (worst.rank == 0) memcpy(calls_us[k], mine, sizeof mine);
    else if (rank == worst.rank) MPI_Send(mine, 6, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    else if (rank == 0) MPI_Recv(calls_us[k], 6, MPI_DOUBLE, worst.rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* Every schedule must agree with the built-in: element i is sum over ranks of (rank + i % 7). */
    for (int i = 0; i < count; i++) {
      float want = (float)(n * (n - 1) / 2 + n * (i % 7));
      if (out[i] != want) {
        fprintf(stderr, "rank %d: %s: out[%d] = %g, want %g\n", rank, names[k], i, out[i], want);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  if (rank == 0) {
    printf("n=%d bytes=%ld yield=%d", n, bytes, yield_cpu);
    if (yield_cpu) printf(" after %g us idle", yield_after_us);
    printf(": MPI_Allreduce %.2f us; ring %.2f us (%.2fx)", median[0], median[1], median[1] / median[0]);
    if (pow2) printf("; recursive_doubling %.2f us (%.2fx)", median[2], median[2] / median[0]);
    printf("\n");
    for (int k = 0; k < 3; k++) {
      if (k == 2 && !pow2) continue;
      const double* c = calls_us[k];
      printf("  %s per call (%d calls, the rank with the highest mean/median): min %.2f median %.2f p99 %.2f max %.0f mean %.2f us, mean/median %.2f, %.0f%% of the time in calls over 5x the median\n",
             names[k], 9 * calls, c[0], c[1], c[2], c[3], c[4], c[4] / c[1], 100 * c[5]);
    }
  }
  free(each);
  free(in);
  free(out);
  free(scratch);
  MPI_Finalize();
  return 0;
}

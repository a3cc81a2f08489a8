/*
 * The physical floors `cclab bench --floors` prints beside its rows, measured in C on the same
 * machine (not part of the addon; src/bench/floors.ts builds it with mpicc and runs it under
 * mpirun -np 2):
 *   - MPI ping-pong latency: half the round trip of an 8-byte message, rank 0 <-> rank 1;
 *   - MPI_Sendrecv bandwidth: both ranks exchange `bytes` at once, bytes / time per direction;
 *   - memcpy bandwidth over `bytes`, and a float32 sum dst[i] = a[i] + b[i] over `bytes` of dst
 *     (bytes read + written / time is not what is reported: it is dst bytes / time, as a
 *     reduction kernel's rate is quoted against its message).
 * Each figure is the median of `reps` timed repetitions after warm-up. Output: one JSON line from
 * rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* xs, int n) {
  qsort(xs, n, sizeof(double), cmp);
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = argc > 1 ? atol(argv[1]) : 1L << 24;
  int reps = argc > 2 ? atoi(argv[2]) : 20;
  if (size != 2 || bytes < 8 || reps < 1) {
    if (rank == 0) fprintf(stderr, "floors: run as mpirun -np 2 floors [bytes >= 8] [reps >= 1]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int peer = 1 - rank;
  double* t = malloc(sizeof(double) * (size_t)(reps > 1000 ? reps : 1000));
  char* sbuf = malloc((size_t)bytes);
  char* rbuf = malloc((size_t)bytes);
  memset(sbuf, 1, (size_t)bytes);
  memset(rbuf, 0, (size_t)bytes);

  /* Ping-pong: 1000 round trips per repetition, so the timer's resolution does not count. */
  const int trips = 1000;
  double lat[32];
  int lreps = reps < 32 ? reps : 32;
  for (int r = -2; r < lreps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < trips; i++) {
      if (rank == 0) {
        MPI_Send(sbuf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(rbuf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(rbuf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
    }
    if (r >= 0) lat[r] = (MPI_Wtime() - t0) / trips / 2;
  }

  /* Sendrecv: both directions at once, as a ring step does. */
  for (int r = -2; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Sendrecv(sbuf, (int)bytes, MPI_BYTE, peer, 1, rbuf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (r >= 0) t[r] = MPI_Wtime() - t0;
  }
  double sendrecv = median(t, reps);

  /* memcpy and the float32 sum, on rank 0 alone (rank 1 waits in the barrier, idle). */
  double copy = 0, sum = 0;
  if (rank == 0) {
    for (int r = -2; r < reps; r++) {
      double t0 = MPI_Wtime();
      memcpy(rbuf, sbuf, (size_t)bytes);
      if (r >= 0) t[r] = MPI_Wtime() - t0;
    }
    copy = median(t, reps);
    long n = bytes / 4;
    float* a = (float*)sbuf;
    float* b = (float*)rbuf;
    float* d = malloc((size_t)n * sizeof(float));
    for (long i = 0; i < n; i++) a[i] = (float)(i & 1023), b[i] = 1.0f;
    for (int r = -2; r < reps; r++) {
      double t0 = MPI_Wtime();
      for (long i = 0; i < n; i++) d[i] = a[i] + b[i];
      if (r >= 0) t[r] = MPI_Wtime() - t0;
    }
    sum = median(t, reps);
    /* Keep the sum observable so the loop is not optimised away. */
    if (d[n - 1] < 0) fprintf(stderr, "%f\n", d[n - 1]);
    free(d);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf(
        "{\"bytes\":%ld,\"reps\":%d,\"pingPongUs\":%.3f,\"sendrecvGBps\":%.3f,\"memcpyGBps\":%.3f,"
        "\"sumFloat32GBps\":%.3f}\n",
        bytes, reps, median(lat, lreps) * 1e6, bytes / sendrecv / 1e9, bytes / copy / 1e9, bytes / sum / 1e9);
  }
  free(t);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}

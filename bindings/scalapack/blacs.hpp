// The few BLACS entry points the ScaLAPACK layer needs (C interface, exported by every
// ScaLAPACK build, Debian's libscalapack-openmpi included).
#pragma once

#include <mpi.h>

extern "C" {
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_get(int context, int what, int* value);
MPI_Comm Cblacs2sys_handle(int system_context);
int Cblacs_pnum(int context, int prow, int pcol);
// Element-wise largest magnitude over a scope of the grid; rdest = -1: the result everywhere.
void Cigamx2d(int context, const char* scope, const char* top, int m, int n, int* a, int lda,
              int* ra, int* ca, int ldia, int rdest, int cdest);
}

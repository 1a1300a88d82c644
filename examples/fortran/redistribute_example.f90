! tessera from Fortran on ScaLAPACK-style matrices: layouts from descriptors, a transpose, a copy
! with a small buffer (in rounds), a relabelled copy that moves nothing, a sub-matrix update and a
! conjugate transpose between block-cyclic layouts, the matrix saved to and loaded from an HDF5
! file in one call each, every result checked.
!   mpirun -np 3 ./tessera_redistribute_example_fortran
program redistribute_example
  use, intrinsic :: iso_c_binding, only: c_double, c_double_complex, c_int64_t
  use mpi_f08
  use tessera
  use tessera_redistribute
  implicit none
  integer, parameter :: m = 11, n = 7
  type(tessera_layout) :: la, lb, lc, lrows, lshift, ltarget
  type(tessera_redistribute_plan) :: plan
  real(c_double), allocatable :: a(:, :), b(:, :), c(:, :), a2(:, :), c2(:, :), b2(:, :), t(:, :)
  integer, allocatable :: relabelling(:)
  integer(c_int64_t) :: buffer_bytes, rounds
  integer :: r, rt, ct, ldt
  complex(c_double_complex), allocatable :: za(:, :), zb(:, :)
  integer :: desca(9), bad_desc(9)
  integer :: rank, nranks, comm, bad, total, i, j, gi, gj, ra, ca, lda, rb, cb, ldb, rc, cc, ldc

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  comm = MPI_COMM_WORLD%MPI_VAL
  bad = 0

  ! A: m x n in 2 x 3 blocks on a 1 x nranks grid, from its descriptor as descinit fills it (the
  ! context, desc(2), is not read); B = A**T: n x m in 3 x 2 blocks on an nranks x 1 grid.
  desca = [1, 0, m, n, 2, 3, 0, 0, m]
  call require(tessera_layout_create_descriptor(la, desca, 1, nranks, nranks))
  call require(tessera_layout_local_block(la, rank, ra, ca, lda))
  call require(tessera_layout_create_block_cyclic(lb, n, m, 3, 2, nranks, 1, 0, 0, 0, nranks))
  call require(tessera_layout_local_block(lb, rank, rb, cb, ldb))
  allocate (a(lda, ca), b(max(1, ldb), cb))
  do j = 1, ca
    do i = 1, ra
      a(i, j) = entry(global(i, 2, 0, 1), global(j, 3, rank, nranks))
    end do
  end do

  ! B = A**T.
  call require(tessera_redistribute_plan_create(plan, la, lb, TESSERA_MATRIX_OP_TRANSPOSE, &
                                                TESSERA_F64, comm))
  call require(tessera_redistribute_plan_execute(plan, a, b))
  call require(tessera_redistribute_plan_destroy(plan))
  do j = 1, cb
    do i = 1, rb
      gi = global(i, 3, rank, nranks)
      gj = global(j, 2, 0, 1)
      if (b(i, j) /= entry(gj, gi)) bad = bad + 1
    end do
  end do

  ! A dealt by rows, one at a time over an nranks x 1 grid, with at most 64 bytes of send and
  ! receive buffers on each rank: every rank sends to every other, in rounds (a round never
  ! carries less than one element per message, hence the floor of 16 bytes per other rank).
  call require(tessera_layout_create_block_cyclic(lrows, m, n, 1, 1, nranks, 1, 0, 0, 0, nranks))
  call require(tessera_layout_local_block(lrows, rank, rt, ct, ldt))
  allocate (b2(max(1, ldt), ct))
  call require(tessera_redistribute_plan_create(plan, la, lrows, TESSERA_MATRIX_OP_NONE, &
                                                TESSERA_F64, comm, max_buffer_bytes=64_c_int64_t))
  call require(tessera_redistribute_plan_execute(plan, a, b2))
  call require(tessera_redistribute_plan_buffer(plan, buffer_bytes, rounds))
  call require(tessera_redistribute_plan_destroy(plan))
  call require(tessera_layout_destroy(lrows))
  if (buffer_bytes > max(64_c_int64_t, 16_c_int64_t * (nranks - 1))) bad = bad + 1
  if (nranks > 1 .and. rounds < 2) bad = bad + 1
  do j = 1, ct
    do i = 1, rt
      if (b2(i, j) /= entry(global(i, 1, rank, nranks), j)) bad = bad + 1
    end do
  end do

  ! A's blocks dealt from the next grid column (csrc = 1): with relabel, rank r takes over what
  ! that layout gives rank r + 1, which it holds already; B is laid out in the plan's target
  ! layout, here A's blocks where they are, and nothing moves.
  call require(tessera_layout_create_block_cyclic(lshift, m, n, 2, 3, 1, nranks, 0, &
                                                  min(1, nranks - 1), 0, nranks))
  call require(tessera_redistribute_plan_create(plan, la, lshift, TESSERA_MATRIX_OP_NONE, &
                                                TESSERA_F64, comm, relabel=.true.))
  allocate (relabelling(nranks))
  call require(tessera_redistribute_plan_relabelling(plan, relabelling))
  call require(tessera_redistribute_plan_target(plan, ltarget))
  call require(tessera_layout_local_block(ltarget, rank, rt, ct, ldt))
  allocate (t(max(1, ldt), ct))
  call require(tessera_redistribute_plan_execute(plan, a, t))
  call require(tessera_redistribute_plan_buffer(plan, buffer_bytes, rounds))
  call require(tessera_redistribute_plan_destroy(plan))
  ! The ranks that layout gives blocks to, 1 to min(nranks - 1, block columns), are taken over
  ! by their left neighbours; the others, holding nothing, pair up among themselves.
  do r = 1, min(nranks - 1, (n + 2) / 3)
    if (relabelling(r + 1) /= r - 1) bad = bad + 1
  end do
  if (ct /= ca .or. (ct > 0 .and. rt /= ra) .or. buffer_bytes /= 0) bad = bad + 1
  if (ct > 0) then
    if (any(t(1:rt, :) /= a(1:ra, :))) bad = bad + 1
  end if
  call require(tessera_layout_destroy(lshift))
  call require(tessera_layout_destroy(ltarget))

  ! C(2:4, 3:5) = C(2:4, 3:5) + 2 A(1:3, 2:4), C in 4 x 1 blocks, every other element 1.
  call require(tessera_layout_create_block_cyclic(lc, m, n, 4, 1, 1, nranks, 0, 0, 0, nranks))
  call require(tessera_layout_local_block(lc, rank, rc, cc, ldc))
  allocate (c(max(1, ldc), cc))
  c = 1
  call require(tessera_redistribute_plan_create(plan, la, lc, TESSERA_MATRIX_OP_NONE, TESSERA_F64, &
                                                comm, m=3, n=3, ia=1, ja=2, ib=2, jb=3))
  call require(tessera_redistribute_plan_execute(plan, a, c, alpha=2d0, beta=1d0))
  call require(tessera_redistribute_plan_destroy(plan))
  do j = 1, cc
    do i = 1, rc
      gi = global(i, 4, 0, 1)
      gj = global(j, 1, rank, nranks)
      if (gi >= 2 .and. gi <= 4 .and. gj >= 3 .and. gj <= 5) then
        if (c(i, j) /= 1 + 2 * entry(gi - 1, gj - 1)) bad = bad + 1
      else if (c(i, j) /= 1) then
        bad = bad + 1
      end if
    end do
  end do

  ! A saved to an HDF5 file in one call (the dataset /A is m x n, whatever the layout), then
  ! loaded back into A's layout and into C's (4 x 1 blocks) in one call each.
  call require(tessera_layout_write_hdf5(la, 'redistribute_example.h5', '/A', a, comm))
  allocate (a2(lda, ca), c2(max(1, ldc), cc))
  call require(tessera_layout_read_hdf5(la, 'redistribute_example.h5', '/A', a2, comm))
  call require(tessera_layout_read_hdf5(lc, 'redistribute_example.h5', '/A', c2, comm))
  if (any(a2(1:ra, :) /= a(1:ra, :))) bad = bad + 1
  do j = 1, cc
    do i = 1, rc
      if (c2(i, j) /= entry(global(i, 4, 0, 1), global(j, 1, rank, nranks))) bad = bad + 1
    end do
  end do

  ! Complex: ZB = i * conjg(ZA)**T, same layouts as A and B.
  allocate (za(lda, ca), zb(max(1, ldb), cb))
  za = cmplx(a, -a, c_double_complex)
  call require(tessera_redistribute_plan_create(plan, la, lb, TESSERA_MATRIX_OP_CONJ_TRANSPOSE, &
                                                TESSERA_C128, comm))
  call require(tessera_redistribute_plan_execute(plan, za, zb, alpha=(0d0, 1d0)))
  call require(tessera_redistribute_plan_destroy(plan))
  do j = 1, cb
    do i = 1, rb
      gi = global(i, 3, rank, nranks)
      gj = global(j, 2, 0, 1)
      if (zb(i, j) /= (0d0, 1d0) * cmplx(entry(gj, gi), entry(gj, gi), c_double_complex)) &
        bad = bad + 1
    end do
  end do

  ! Errors come back as codes, with the message: a descriptor of another type than 1.
  bad_desc = desca
  bad_desc(1) = 2
  if (tessera_layout_create_descriptor(lc, bad_desc, 1, nranks, nranks) /= TESSERA_ERROR_INPUT) &
    bad = bad + 1
  if (len(tessera_last_error()) == 0) bad = bad + 1

  call require(tessera_layout_destroy(la))
  call require(tessera_layout_destroy(lb))
  call require(tessera_layout_destroy(lc))
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(a, i0, a)', 'Fortran redistribute example (', nranks, ' ranks): ok'
    else
      print '(a, i0, a)', 'Fortran redistribute example: FAILED (', total, ' wrong)'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  ! The global index (1-based) of local index l in blocks of nb dealt over np processes from
  ! process 0, on process p (ScaLAPACK's indxl2g).
  integer function global(l, nb, p, np)
    integer, intent(in) :: l, nb, p, np
    global = ((l - 1) / nb) * np * nb + p * nb + mod(l - 1, nb) + 1
  end function

  real(c_double) function entry(i, j)
    integer, intent(in) :: i, j
    entry = real(i * 1000 + j, c_double)
  end function

  subroutine require(ierr)
    integer, intent(in) :: ierr
    if (ierr /= TESSERA_OK) then
      write (*, '(a, a)') 'tessera: ', tessera_last_error()
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program

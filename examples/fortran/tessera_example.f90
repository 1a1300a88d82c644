! tessera from Fortran: a distributed transpose and reductions, with every result checked.
!   mpirun -np 3 ./tessera_example_fortran
program tessera_example
  use, intrinsic :: iso_c_binding, only: c_int64_t, c_double
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use mpi_f08
  use tessera
  implicit none
  integer(c_int64_t), parameter :: m = 31, n = 19
  type(tessera_transpose_plan) :: plan
  type(tessera_reduce_plan) :: rp
  real(c_double), allocatable :: a(:, :), at(:, :), values(:, :)
  integer(c_int64_t) :: b, rows, tb, trows, i, j
  integer :: rank, nranks, bad, total, r
  real(c_double) :: nn, norm2, want_sum, want_count

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  b = tessera_block_begin(m, nranks, rank)
  rows = tessera_block_rows(m, nranks, rank)
  tb = tessera_block_begin(n, nranks, rank)
  trows = tessera_block_rows(n, nranks, rank)
  ! A rank's rows of the row-major m x n matrix a(i, j) = i * n + j (0-based) are the columns
  ! of the Fortran array a(n, rows).
  allocate (a(n, rows), at(m, trows))
  do i = 1, rows
    do j = 1, n
      a(j, i) = real((b + i - 1) * n + (j - 1), c_double)
    end do
  end do

  call require(tessera_transpose_plan_create(plan, m, n, TESSERA_F64, MPI_COMM_WORLD%MPI_VAL, &
                                             TESSERA_BACKEND_CPU))
  call require(tessera_transpose_plan_execute(plan, a, at))
  call require(tessera_transpose_plan_destroy(plan))
  bad = 0
  do i = 1, trows
    do j = 1, m
      if (at(j, i) /= real((j - 1) * n + (tb + i - 1), c_double)) bad = bad + 1
    end do
  end do

  call require(tessera_reduce_plan_create(rp, m, n, TESSERA_F64, MPI_COMM_WORLD%MPI_VAL, &
                                          TESSERA_BACKEND_CPU, [TESSERA_OP_SUM, TESSERA_OP_NORM2], &
                                          TESSERA_AXIS_ALL))
  allocate (values(tessera_reduce_plan_count(rp), 2))
  call require(tessera_reduce_plan_execute(rp, a, values))
  call require(tessera_reduce_plan_destroy(rp))
  nn = real(m * n, c_double)
  norm2 = sqrt((nn - 1) * nn * (2 * nn - 1) / 6)
  if (values(1, 1) /= nn * (nn - 1) / 2) bad = bad + 1
  if (abs(values(1, 2) - norm2) > 1e-12_c_double * norm2) bad = bad + 1

  ! Missing values are skipped: on ranks with two rows or more, the first element becomes NaN and
  ! the second the fill value -999 (a netCDF _FillValue).
  if (rows > 1) then
    a(1, 1) = ieee_value(a(1, 1), ieee_quiet_nan)
    a(2, 1) = -999
  end if
  call require(tessera_reduce_plan_create(rp, m, n, TESSERA_F64, MPI_COMM_WORLD%MPI_VAL, &
                                          TESSERA_BACKEND_CPU, [TESSERA_OP_SUM, TESSERA_OP_COUNT], &
                                          TESSERA_AXIS_ALL, skip_nan=.true., &
                                          missing_values=[-999.0_c_double]))
  call require(tessera_reduce_plan_execute(rp, a, values))
  call require(tessera_reduce_plan_destroy(rp))
  want_sum = nn * (nn - 1) / 2
  want_count = nn
  do r = 0, nranks - 1
    if (tessera_block_rows(m, nranks, r) > 1) then
      want_sum = want_sum - 2 * real(tessera_block_begin(m, nranks, r) * n, c_double) - 1
      want_count = want_count - 2
    end if
  end do
  if (values(1, 1) /= want_sum .or. values(1, 2) /= want_count) bad = bad + 1

  ! Errors come back as codes, with the message.
  if (tessera_transpose_plan_create(plan, -1_c_int64_t, n, TESSERA_F64, MPI_COMM_WORLD%MPI_VAL, &
                                    TESSERA_BACKEND_CPU) /= TESSERA_ERROR_INPUT) bad = bad + 1
  if (len(tessera_last_error()) == 0) bad = bad + 1

  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(a, i0, a)', 'Fortran example (', nranks, ' ranks): ok'
    else
      print '(a)', 'Fortran example: FAILED'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  subroutine require(ierr)
    integer, intent(in) :: ierr
    if (ierr /= TESSERA_OK) then
      write (*, '(a, a)') 'tessera: ', tessera_last_error()
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program

! tessera from Fortran: permutations of the dimensions of 3-D arrays distributed over the ranks,
! every element checked against the serial permutation of the whole array.
!   mpirun -np 3 ./tessera_permute_example_fortran
!
! tessera takes shapes and axes in row-major order (outermost first, axes 0-based, as C, numpy
! and HDF5 files give them); a Fortran array declares the same dimensions reversed. The field
! temp(time, lat, lon) of the files is the Fortran array temp(nlon, nlat, ntime), split over the
! ranks along time, its last Fortran dimension.
program tessera_permute_example
  use, intrinsic :: iso_c_binding, only: c_int64_t, c_double, c_int32_t
  use mpi_f08
  use tessera
  implicit none
  integer(c_int64_t), parameter :: ntime = 5, nlat = 7, nlon = 11
  integer :: rank, nranks, bad, total

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  bad = 0
  ! (time, lat, lon) -> (lat, lon, time): a time series per grid point, time innermost.
  call permute_f64([ntime, nlat, nlon], [1, 2, 0])
  ! int32 (3, 2, 5) -> (2, 3, 5): at 3 ranks, one rank owns no output row.
  call permute_i32([3_c_int64_t, 2_c_int64_t, 5_c_int64_t], [1, 0, 2])

  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(a, i0, a)', 'Fortran permute example (', nranks, ' ranks): ok'
    else
      print '(a, i0, a)', 'Fortran permute example: FAILED (', total, ' wrong)'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  ! RESHAPE's ORDER for the serial permutation: the Fortran dimension of the result that input
  ! Fortran dimension d becomes (Fortran dimension d is row-major dimension n - d).
  function fortran_order(axes) result(order)
    integer, intent(in) :: axes(:)
    integer :: order(size(axes)), k, n
    n = size(axes)
    do k = 1, n
      order(n - axes(k)) = n + 1 - k
    end do
  end function

  ! The row-major shape of the output: dimension k is input dimension axes(k).
  function permuted(shape, axes) result(out)
    integer(c_int64_t), intent(in) :: shape(:)
    integer, intent(in) :: axes(:)
    integer(c_int64_t) :: out(size(shape))
    out = shape(axes + 1)
  end function

  subroutine permute_f64(shape, axes)
    integer(c_int64_t), intent(in) :: shape(3)
    integer, intent(in) :: axes(3)
    type(tessera_permute_plan) :: plan
    real(c_double), allocatable :: whole(:, :, :), want(:, :, :), x(:, :, :), y(:, :, :)
    integer(c_int64_t) :: out(3), ib, il, ob, ol
    integer :: i
    out = permuted(shape, axes)
    ! The whole array, on every rank: element (t, y, x) in row-major order holds its offset.
    allocate (whole(shape(3), shape(2), shape(1)))
    whole = reshape([(real(i, c_double), i = 0, int(product(shape)) - 1)], [shape(3:1:-1)])
    want = reshape(whole, [out(3:1:-1)], order=fortran_order(axes))

    call require(tessera_permute_plan_create(plan, shape, axes, TESSERA_F64, &
                                             MPI_COMM_WORLD%MPI_VAL, TESSERA_BACKEND_CPU))
    call require(tessera_permute_plan_input_block(plan, begin=ib, length=il))
    call require(tessera_permute_plan_output_block(plan, begin=ob, length=ol))
    allocate (x(shape(3), shape(2), il), y(out(3), out(2), ol))
    x = whole(:, :, ib + 1:ib + il)
    call require(tessera_permute_plan_execute(plan, x, y))
    call require(tessera_permute_plan_destroy(plan))
    bad = bad + count(y /= want(:, :, ob + 1:ob + ol))
  end subroutine

  subroutine permute_i32(shape, axes)
    integer(c_int64_t), intent(in) :: shape(3)
    integer, intent(in) :: axes(3)
    type(tessera_permute_plan) :: plan
    integer(c_int32_t), allocatable :: whole(:, :, :), want(:, :, :), x(:, :, :), y(:, :, :)
    integer(c_int64_t) :: out(3), ib, il, ob, ol
    integer :: i
    out = permuted(shape, axes)
    allocate (whole(shape(3), shape(2), shape(1)))
    whole = reshape([(int(i, c_int32_t), i = 0, int(product(shape)) - 1)], [shape(3:1:-1)])
    want = reshape(whole, [out(3:1:-1)], order=fortran_order(axes))

    call require(tessera_permute_plan_create(plan, shape, axes, TESSERA_I32, &
                                             MPI_COMM_WORLD%MPI_VAL, TESSERA_BACKEND_CPU))
    call require(tessera_permute_plan_input_block(plan, begin=ib, length=il))
    call require(tessera_permute_plan_output_block(plan, begin=ob, length=ol))
    allocate (x(shape(3), shape(2), il), y(out(3), out(2), ol))
    x = whole(:, :, ib + 1:ib + il)
    call require(tessera_permute_plan_execute(plan, x, y))
    call require(tessera_permute_plan_destroy(plan))
    bad = bad + count(y /= want(:, :, ob + 1:ob + ol))

    ! Errors come back as codes on every rank, with the message: [1, 1, 0] is no permutation.
    if (tessera_permute_plan_create(plan, shape, [1, 1, 0], TESSERA_I32, MPI_COMM_WORLD%MPI_VAL, &
                                    TESSERA_BACKEND_CPU) /= TESSERA_ERROR_INPUT) bad = bad + 1
    if (len(tessera_last_error()) == 0) bad = bad + 1
  end subroutine

  subroutine require(ierr)
    integer, intent(in) :: ierr
    if (ierr /= TESSERA_OK) then
      write (*, '(a, a)') 'tessera: ', tessera_last_error()
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine
end program

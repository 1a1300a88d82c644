! The Fortran 2008 module `tessera` over the C API (tessera/tessera.h), through ISO_C_BINDING.
!
!   use tessera
!   type(tessera_transpose_plan) :: plan
!   ierr = tessera_transpose_plan_create(plan, m, n, TESSERA_F64, MPI_COMM_WORLD%MPI_VAL, &
!                                        TESSERA_BACKEND_CPU)
!   ierr = tessera_transpose_plan_execute(plan, a, at)
!   ierr = tessera_transpose_plan_destroy(plan)
!
! Communicators are integer handles: MPI_COMM_WORLD from `use mpi`, comm%MPI_VAL from mpi_f08.
! Blocks are Fortran arrays a(ncols, local_rows): a rank's rows of a row-major matrix are the
! columns of the Fortran array. Every function returns TESSERA_OK (0) or an error code, and
! tessera_last_error() is then the message.
!
! Permutations of dimensions take the shape and the axes in the same row-major order as the C
! API and numpy (0-based axes, outermost dimension first): a Fortran array x(n3, n2, n1) is the
! row-major array of shape [n1, n2, n3], split over the ranks along n1, its last Fortran
! dimension. See tessera_permute_plan_create.
module tessera
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: TESSERA_OK = 0, TESSERA_ERROR_INPUT = 1, TESSERA_ERROR_IO = 2, &
                                TESSERA_ERROR_MPI = 3, TESSERA_ERROR_CUDA = 4, &
                                TESSERA_ERROR_NOT_COMPILED = 5, TESSERA_ERROR_RESOURCE = 6, &
                                TESSERA_ERROR_NUMERICAL = 7, TESSERA_ERROR_INTERNAL = 8
  integer, parameter, public :: TESSERA_F32 = 0, TESSERA_F64 = 1, TESSERA_C64 = 2, TESSERA_C128 = 3
  ! For permutations only. Fortran has no unsigned integers: pass the U types in integer arrays
  ! of the same size; a permutation moves their bits unchanged.
  integer, parameter, public :: TESSERA_I8 = 4, TESSERA_I16 = 5, TESSERA_I32 = 6, &
                                TESSERA_I64 = 7, TESSERA_U8 = 8, TESSERA_U16 = 9, &
                                TESSERA_U32 = 10, TESSERA_U64 = 11
  integer, parameter, public :: TESSERA_BACKEND_AUTO = 0, TESSERA_BACKEND_CPU = 1, &
                                TESSERA_BACKEND_CUDA = 2
  integer, parameter, public :: TESSERA_OP_SUM = 0, TESSERA_OP_MIN = 1, TESSERA_OP_MAX = 2, &
                                TESSERA_OP_MEAN = 3, TESSERA_OP_NORM1 = 4, TESSERA_OP_NORM2 = 5, &
                                TESSERA_OP_NORMINF = 6, TESSERA_OP_COUNT = 7
  integer, parameter, public :: TESSERA_AXIS_ALL = 0, TESSERA_AXIS_ROWS = 1, TESSERA_AXIS_COLS = 2

  type, public :: tessera_transpose_plan
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: tessera_reduce_plan
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: tessera_permute_plan
    type(c_ptr) :: handle = c_null_ptr
  end type

  public :: tessera_transpose_plan_create, tessera_transpose_plan_execute, &
            tessera_transpose_plan_destroy, tessera_reduce_plan_create, &
            tessera_reduce_plan_count, tessera_reduce_plan_execute, tessera_reduce_plan_destroy, &
            tessera_permute_plan_create, tessera_permute_plan_input_block, &
            tessera_permute_plan_output_block, tessera_permute_plan_execute, &
            tessera_permute_plan_destroy, tessera_block_begin, tessera_block_rows, &
            tessera_last_error

  interface tessera_transpose_plan_execute
    module procedure transpose_execute_r32, transpose_execute_r64, transpose_execute_c64, transpose_execute_c128
  end interface
  interface tessera_reduce_plan_execute
    module procedure reduce_execute_r32, reduce_execute_r64
  end interface

  interface
    integer(c_int) function c_transpose_create(plan, rows, cols, dtype, comm, backend) &
        bind(C, name="tessera_transpose_plan_create_f")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(out) :: plan
      integer(c_int64_t), value :: rows, cols
      integer(c_int), value :: dtype, comm, backend
    end function
    integer(c_int) function c_transpose_execute(plan, in, out) &
        bind(C, name="tessera_transpose_plan_execute")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, in, out
    end function
    integer(c_int) function c_transpose_destroy(plan) bind(C, name="tessera_transpose_plan_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
    end function
    integer(c_int) function c_reduce_create_missing(plan, rows, cols, dtype, comm, backend, ops, &
                                                    nops, axis, skip_nan, values, nvalues) &
        bind(C, name="tessera_reduce_plan_create_missing_f")
      import :: c_int, c_int64_t, c_ptr, c_double
      type(c_ptr), intent(out) :: plan
      integer(c_int64_t), value :: rows, cols
      integer(c_int), value :: dtype, comm, backend, nops, axis, skip_nan, nvalues
      integer(c_int), intent(in) :: ops(*)
      real(c_double), intent(in) :: values(*)
    end function
    integer(c_int64_t) function c_reduce_count(plan) bind(C, name="tessera_reduce_plan_count")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: plan
    end function
    integer(c_int) function c_reduce_execute(plan, block, values) &
        bind(C, name="tessera_reduce_plan_execute")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, block, values
    end function
    integer(c_int) function c_reduce_destroy(plan) bind(C, name="tessera_reduce_plan_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
    end function
    integer(c_int) function c_permute_create(plan, rank, shape, axes, dtype, comm, backend) &
        bind(C, name="tessera_permute_plan_create_f")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(out) :: plan
      integer(c_int), value :: rank, dtype, comm, backend
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int), intent(in) :: axes(*)
    end function
    ! Absent optional arguments arrive as null pointers, which the C API skips.
    integer(c_int) function c_permute_input_block(plan, begin, length, elements) &
        bind(C, name="tessera_permute_plan_input_block")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out), optional :: begin, length, elements
    end function
    integer(c_int) function c_permute_output_block(plan, begin, length, elements) &
        bind(C, name="tessera_permute_plan_output_block")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out), optional :: begin, length, elements
    end function
    ! Assumed type and size: any numeric array of any rank arrives as its address.
    integer(c_int) function c_permute_execute(plan, in, out) &
        bind(C, name="tessera_permute_plan_execute")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      type(*), intent(in) :: in(*)
      type(*), intent(inout) :: out(*)
    end function
    integer(c_int) function c_permute_destroy(plan) bind(C, name="tessera_permute_plan_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
    end function
    integer(c_int64_t) function c_block_begin(rows, nranks, rank) bind(C, name="tessera_block_begin")
      import :: c_int, c_int64_t
      integer(c_int64_t), value :: rows
      integer(c_int), value :: nranks, rank
    end function
    integer(c_int64_t) function c_block_rows(rows, nranks, rank) bind(C, name="tessera_block_rows")
      import :: c_int, c_int64_t
      integer(c_int64_t), value :: rows
      integer(c_int), value :: nranks, rank
    end function
    integer(c_int) function c_last_error_copy(buf, len) bind(C, name="tessera_last_error_copy")
      import :: c_int, c_char
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_int), value :: len
    end function
  end interface

contains

  ! The first row (0-based) and the number of rows of `rank` when `rows` rows are distributed
  ! over `nranks` ranks.
  integer(c_int64_t) function tessera_block_begin(rows, nranks, rank)
    integer(c_int64_t), intent(in) :: rows
    integer, intent(in) :: nranks, rank
    tessera_block_begin = c_block_begin(rows, int(nranks, c_int), int(rank, c_int))
  end function
  integer(c_int64_t) function tessera_block_rows(rows, nranks, rank)
    integer(c_int64_t), intent(in) :: rows
    integer, intent(in) :: nranks, rank
    tessera_block_rows = c_block_rows(rows, int(nranks, c_int), int(rank, c_int))
  end function

  ! The message of the last failing call on this thread.
  function tessera_last_error() result(message)
    character(len=:), allocatable :: message
    character(kind=c_char) :: buf(1024)
    integer :: n, k
    n = min(int(c_last_error_copy(buf, int(size(buf), c_int))), size(buf))
    allocate (character(len=n) :: message)
    do k = 1, n
      message(k:k) = buf(k)
    end do
  end function

  integer function tessera_transpose_plan_create(plan, rows, cols, dtype, comm, backend)
    type(tessera_transpose_plan), intent(out) :: plan
    integer(c_int64_t), intent(in) :: rows, cols
    integer, intent(in) :: dtype, comm, backend
    tessera_transpose_plan_create = c_transpose_create(plan%handle, rows, cols, int(dtype, c_int), &
                                                       int(comm, c_int), int(backend, c_int))
  end function

  integer function tessera_transpose_plan_destroy(plan)
    type(tessera_transpose_plan), intent(inout) :: plan
    tessera_transpose_plan_destroy = c_transpose_destroy(plan%handle)
    plan%handle = c_null_ptr
  end function

  ! skip_nan: NaN elements are missing (numpy's nansum, nanmax, ...); missing_values: elements
  ! equal to one of these are missing (a netCDF _FillValue or missing_value). Both optional.
  integer function tessera_reduce_plan_create(plan, rows, cols, dtype, comm, backend, ops, axis, &
                                              skip_nan, missing_values)
    type(tessera_reduce_plan), intent(out) :: plan
    integer(c_int64_t), intent(in) :: rows, cols
    integer, intent(in) :: dtype, comm, backend, axis
    integer, intent(in) :: ops(:)
    logical, intent(in), optional :: skip_nan
    real(c_double), intent(in), optional :: missing_values(:)
    integer(c_int) :: c_ops(size(ops)), c_skip
    real(c_double) :: none(1)
    c_ops = int(ops, c_int)
    c_skip = 0
    if (present(skip_nan)) then
      if (skip_nan) c_skip = 1
    end if
    if (present(missing_values)) then
      tessera_reduce_plan_create = c_reduce_create_missing(plan%handle, rows, cols, &
          int(dtype, c_int), int(comm, c_int), int(backend, c_int), c_ops, int(size(ops), c_int), &
          int(axis, c_int), c_skip, missing_values, int(size(missing_values), c_int))
    else
      none = 0
      tessera_reduce_plan_create = c_reduce_create_missing(plan%handle, rows, cols, &
          int(dtype, c_int), int(comm, c_int), int(backend, c_int), c_ops, int(size(ops), c_int), &
          int(axis, c_int), c_skip, none, 0_c_int)
    end if
  end function

  ! Values per operation: 1 (TESSERA_AXIS_ALL), rows or cols.
  integer(c_int64_t) function tessera_reduce_plan_count(plan)
    type(tessera_reduce_plan), intent(in) :: plan
    tessera_reduce_plan_count = c_reduce_count(plan%handle)
  end function

  integer function tessera_reduce_plan_destroy(plan)
    type(tessera_reduce_plan), intent(inout) :: plan
    tessera_reduce_plan_destroy = c_reduce_destroy(plan%handle)
    plan%handle = c_null_ptr
  end function

  ! The permutation of dimensions of a distributed array (numpy's transpose(axes)): output
  ! dimension k is input dimension axes(k+1), for k = 0 ... size(shape) - 1. `shape` and `axes`
  ! are in row-major order, as in C, numpy and HDF5 files (outermost first, axes 0-based), so a
  ! Fortran array declared with the dimensions reversed holds the row-major array: for
  ! shape = [n1, n2, n3] this rank's input block is x(n3, n2, length) and, for axes = [1, 2, 0],
  ! its output block y(n1, n3, length_out) (the row-major output has shape [n2, n3, n1]). The
  ! input is split along shape(1), the output along its own outermost dimension
  ! (shape(axes(1) + 1)), as tessera_block_rows splits rows; ranks with none are legal.
  ! Rank 1 to 8, any dtype (TESSERA_F32 ... TESSERA_U64). Collective over comm.
  integer function tessera_permute_plan_create(plan, shape, axes, dtype, comm, backend)
    type(tessera_permute_plan), intent(out) :: plan
    integer(c_int64_t), intent(in) :: shape(:)
    integer, intent(in) :: axes(:)
    integer, intent(in) :: dtype, comm, backend
    integer(c_int64_t) :: c_shape(max(size(shape), 1))
    integer(c_int) :: c_axes(max(size(shape), 1))
    integer :: k
    c_shape = 0
    c_shape(1:size(shape)) = shape
    ! Axes missing from a list shorter than the shape are -1: the plan then rejects the
    ! permutation on every rank together, naming it.
    c_axes = -1
    do k = 1, min(size(axes), size(shape))
      c_axes(k) = int(axes(k), c_int)
    end do
    if (size(axes) > size(shape) .and. size(shape) > 0) c_axes(size(shape)) = -1
    tessera_permute_plan_create = c_permute_create(plan%handle, int(size(shape), c_int), c_shape, &
        c_axes, int(dtype, c_int), int(comm, c_int), int(backend, c_int))
  end function

  ! This rank's input block: the first index (0-based) and the number of indices it owns along the
  ! input's outermost dimension, and its number of elements. Each argument is optional.
  integer function tessera_permute_plan_input_block(plan, begin, length, elements)
    type(tessera_permute_plan), intent(in) :: plan
    integer(c_int64_t), intent(out), optional :: begin, length, elements
    tessera_permute_plan_input_block = c_permute_input_block(plan%handle, begin, length, elements)
  end function

  ! The same for the output block, along the output's outermost dimension.
  integer function tessera_permute_plan_output_block(plan, begin, length, elements)
    type(tessera_permute_plan), intent(in) :: plan
    integer(c_int64_t), intent(out), optional :: begin, length, elements
    tessera_permute_plan_output_block = c_permute_output_block(plan%handle, begin, length, &
                                                               elements)
  end function

  ! Collective. `in` and `out` are contiguous arrays of the plan's element type, of any rank,
  ! holding at least the block's elements each (see tessera_permute_plan_create); they must not
  ! overlap.
  integer function tessera_permute_plan_execute(plan, in, out)
    type(tessera_permute_plan), intent(in) :: plan
    type(*), intent(in) :: in(*)
    type(*), intent(inout) :: out(*)
    tessera_permute_plan_execute = c_permute_execute(plan%handle, in, out)
  end function

  integer function tessera_permute_plan_destroy(plan)
    type(tessera_permute_plan), intent(inout) :: plan
    tessera_permute_plan_destroy = c_permute_destroy(plan%handle)
    plan%handle = c_null_ptr
  end function

  integer function transpose_execute_r32(plan, in, out)
    type(tessera_transpose_plan), intent(in) :: plan
    real(c_float), intent(in), target, contiguous :: in(:, :)
    real(c_float), intent(inout), target, contiguous :: out(:, :)
    transpose_execute_r32 = c_transpose_execute(plan%handle, c_loc(in), c_loc(out))
  end function

  integer function transpose_execute_r64(plan, in, out)
    type(tessera_transpose_plan), intent(in) :: plan
    real(c_double), intent(in), target, contiguous :: in(:, :)
    real(c_double), intent(inout), target, contiguous :: out(:, :)
    transpose_execute_r64 = c_transpose_execute(plan%handle, c_loc(in), c_loc(out))
  end function

  integer function transpose_execute_c64(plan, in, out)
    type(tessera_transpose_plan), intent(in) :: plan
    complex(c_float_complex), intent(in), target, contiguous :: in(:, :)
    complex(c_float_complex), intent(inout), target, contiguous :: out(:, :)
    transpose_execute_c64 = c_transpose_execute(plan%handle, c_loc(in), c_loc(out))
  end function

  integer function transpose_execute_c128(plan, in, out)
    type(tessera_transpose_plan), intent(in) :: plan
    complex(c_double_complex), intent(in), target, contiguous :: in(:, :)
    complex(c_double_complex), intent(inout), target, contiguous :: out(:, :)
    transpose_execute_c128 = c_transpose_execute(plan%handle, c_loc(in), c_loc(out))
  end function

  ! values(count, nops): values(:, k) belongs to ops(k).
  integer function reduce_execute_r32(plan, block, values)
    type(tessera_reduce_plan), intent(in) :: plan
    real(c_float), intent(in), target, contiguous :: block(:, :)
    real(c_double), intent(inout), target, contiguous :: values(:, :)
    reduce_execute_r32 = c_reduce_execute(plan%handle, c_loc(block), c_loc(values))
  end function

  ! values(count, nops): values(:, k) belongs to ops(k).
  integer function reduce_execute_r64(plan, block, values)
    type(tessera_reduce_plan), intent(in) :: plan
    real(c_double), intent(in), target, contiguous :: block(:, :)
    real(c_double), intent(inout), target, contiguous :: values(:, :)
    reduce_execute_r64 = c_reduce_execute(plan%handle, c_loc(block), c_loc(values))
  end function

end module tessera

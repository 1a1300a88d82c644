! The Fortran 2008 module `tessera_redistribute`: layouts and redistribution plans over the C API
! (tessera/tessera.h), for matrices ScaLAPACK codes hold, described by their descriptors.
!
!   use tessera
!   use tessera_redistribute
!   type(tessera_layout) :: la, lb
!   type(tessera_redistribute_plan) :: plan
!   ierr = tessera_layout_create_descriptor(la, desca, nprow, npcol, nranks)
!   ierr = tessera_layout_create_descriptor(lb, descb, nprow, npcol, nranks)
!   ierr = tessera_redistribute_plan_create(plan, la, lb, TESSERA_MATRIX_OP_TRANSPOSE, &
!                                           TESSERA_F64, comm)            ! B = A**T
!   ierr = tessera_redistribute_plan_execute(plan, a, b)                  ! a(lld_a, :), b(lld_b, :)
!   ierr = tessera_redistribute_plan_destroy(plan)
!
! With relabel=.true. the plan may write B with its owners permuted, so that each rank keeps as
! much of op(A) as it can: tessera_redistribute_plan_target gives the layout b must then be laid
! out in, tessera_redistribute_plan_relabelling who holds what. A plan's send and receive buffers
! stay within one local block (or max_buffer_bytes), in rounds where the exchange needs more;
! tessera_redistribute_plan_buffer says how much and in how many.
!
! A plan is p?gemr2d or p?tran made once and run many times, over any communicator: the grid's
! shape (nprow x npcol, Cblacs_gridinfo) is passed where ScaLAPACK reads it from the BLACS
! context in desc(2). Sub-matrices are 1-based, as ScaLAPACK's (m, n, ia, ja, ib, jb). Local
! blocks are the ScaLAPACK local arrays a(lld, local columns). Every function returns TESSERA_OK
! (0) or an error code, and tessera_last_error() (module tessera) is then the message.
!
! A matrix in any layout loads from and saves to a 2-D HDF5 dataset in one call each
! (collective over comm; the file is written whole, replacing an existing one when complete):
!   ierr = tessera_layout_read_hdf5(la, 'a.h5', '/A', a, comm)     ! a(lld_a, :), any kind
!   ierr = tessera_layout_write_hdf5(la, 'b.h5', '/B', a, comm)
module tessera_redistribute
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: TESSERA_ROW_MAJOR = 0, TESSERA_COL_MAJOR = 1
  integer, parameter, public :: TESSERA_GRID_ROW_MAJOR = 0, TESSERA_GRID_COL_MAJOR = 1
  integer, parameter, public :: TESSERA_MATRIX_OP_NONE = 0, TESSERA_MATRIX_OP_TRANSPOSE = 1, &
                                TESSERA_MATRIX_OP_CONJ_TRANSPOSE = 2

  type, public :: tessera_layout
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: tessera_redistribute_plan
    type(c_ptr) :: handle = c_null_ptr
  end type

  public :: tessera_layout_create_descriptor, tessera_layout_create_block_cyclic, &
            tessera_layout_local_block, tessera_layout_destroy, &
            tessera_redistribute_plan_create, tessera_redistribute_plan_execute, &
            tessera_redistribute_plan_destroy, tessera_layout_read_hdf5, &
            tessera_layout_write_hdf5, tessera_redistribute_plan_relabelling, tessera_redistribute_plan_target, &
            tessera_redistribute_plan_buffer

  interface tessera_redistribute_plan_execute
    module procedure redistribute_execute_r32, redistribute_execute_r64, &
                     redistribute_execute_c64, redistribute_execute_c128
  end interface

  interface tessera_layout_read_hdf5
    module procedure read_hdf5_r32, read_hdf5_r64, read_hdf5_c64, read_hdf5_c128
  end interface
  interface tessera_layout_write_hdf5
    module procedure write_hdf5_r32, write_hdf5_r64, write_hdf5_c64, write_hdf5_c128
  end interface

  interface
    integer(c_int) function c_h5_read_layout(file, dataset, layout, dtype, block, memory_limit, &
                                             comm) bind(C, name="tessera_h5_read_layout_f")
      import :: c_char, c_int, c_int64_t, c_ptr
      character(kind=c_char), intent(in) :: file(*), dataset(*)
      type(c_ptr), value :: layout, block
      integer(c_int), value :: dtype, comm
      integer(c_int64_t), value :: memory_limit
    end function
    integer(c_int) function c_h5_write_layout(file, dataset, layout, dtype, block, memory_limit, &
                                              comm) bind(C, name="tessera_h5_write_layout_f")
      import :: c_char, c_int, c_int64_t, c_ptr
      character(kind=c_char), intent(in) :: file(*), dataset(*)
      type(c_ptr), value :: layout, block
      integer(c_int), value :: dtype, comm
      integer(c_int64_t), value :: memory_limit
    end function
  end interface

  interface
    integer(c_int) function c_layout_scalapack(layout, desc, nprow, npcol, order, grid_ranks, &
                                               nranks) bind(C, name="tessera_layout_create_scalapack")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: layout
      integer(c_int), intent(in) :: desc(9)
      integer(c_int), value :: nprow, npcol, order, nranks
      type(c_ptr), value :: grid_ranks
    end function
    integer(c_int) function c_layout_block_cyclic(layout, rows, cols, mb, nb, pr, pc, rsrc, csrc, &
                                                  order, nranks, lld, storage) &
        bind(C, name="tessera_layout_create_block_cyclic")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(out) :: layout
      integer(c_int64_t), value :: rows, cols, mb, nb, lld
      integer(c_int), value :: pr, pc, rsrc, csrc, order, nranks, storage
    end function
    integer(c_int) function c_layout_local_block(layout, rank, rows, cols, ld, storage, elements) &
        bind(C, name="tessera_layout_local_block")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: layout
      integer(c_int), value :: rank
      integer(c_int64_t), intent(out) :: rows, cols, ld, elements
      integer(c_int), intent(out) :: storage
    end function
    integer(c_int) function c_layout_destroy(layout) bind(C, name="tessera_layout_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: layout
    end function
    integer(c_int) function c_plan_create(plan, a, b, op, dtype, rows, cols, a_row, a_col, b_row, &
                                          b_col, flags, max_buffer_bytes, comm) &
        bind(C, name="tessera_redistribute_plan_create_ex_f")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), intent(out) :: plan
      type(c_ptr), value :: a, b
      integer(c_int), value :: op, dtype, flags, comm
      integer(c_int64_t), value :: rows, cols, a_row, a_col, b_row, b_col, max_buffer_bytes
    end function
    integer(c_int) function c_plan_relabelling(plan, relabelling, nranks) &
        bind(C, name="tessera_redistribute_plan_relabelling")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), intent(out) :: relabelling(*)
      integer(c_int), value :: nranks
    end function
    integer(c_int) function c_plan_target(plan, target) &
        bind(C, name="tessera_redistribute_plan_target")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      type(c_ptr), intent(out) :: target
    end function
    integer(c_int) function c_plan_buffer(plan, buffer_bytes, rounds) &
        bind(C, name="tessera_redistribute_plan_buffer")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out) :: buffer_bytes, rounds
    end function
    integer(c_int) function c_plan_execute(plan, alpha, a, beta, b) &
        bind(C, name="tessera_redistribute_plan_execute")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: plan, a, b
      real(c_double), value :: alpha, beta
    end function
    integer(c_int) function c_plan_execute_complex(plan, alpha, a, beta, b) &
        bind(C, name="tessera_redistribute_plan_execute_complex")
      import :: c_int, c_ptr, c_double_complex
      type(c_ptr), value :: plan, a, b
      complex(c_double_complex), intent(in) :: alpha, beta
    end function
    integer(c_int) function c_plan_destroy(plan) bind(C, name="tessera_redistribute_plan_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
    end function
  end interface

contains

  ! The layout of a ScaLAPACK matrix: its descriptor desc(9) on an nprow x npcol BLACS grid
  ! (Cblacs_gridinfo) whose ranks in a communicator of nranks are numbered in grid_order
  ! (TESSERA_GRID_ROW_MAJOR, BLACS's default, if absent). The leading dimension is desc(9).
  integer function tessera_layout_create_descriptor(layout, desc, nprow, npcol, nranks, grid_order)
    type(tessera_layout), intent(out) :: layout
    integer, intent(in) :: desc(9), nprow, npcol, nranks
    integer, intent(in), optional :: grid_order
    integer(c_int) :: order
    order = TESSERA_GRID_ROW_MAJOR
    if (present(grid_order)) order = int(grid_order, c_int)
    tessera_layout_create_descriptor = c_layout_scalapack(layout%handle, int(desc, c_int), &
        int(nprow, c_int), int(npcol, c_int), order, c_null_ptr, int(nranks, c_int))
  end function

  ! 2-D block-cyclic from its parts: m x n in mb x nb blocks on an nprow x npcol grid from grid
  ! position (rsrc, csrc) (0-based, as in a descriptor), column-major local blocks of leading
  ! dimension lld (0: tight), ranks numbered in grid_order (row-major if absent).
  integer function tessera_layout_create_block_cyclic(layout, m, n, mb, nb, nprow, npcol, rsrc, &
                                                      csrc, lld, nranks, grid_order)
    type(tessera_layout), intent(out) :: layout
    integer, intent(in) :: m, n, mb, nb, nprow, npcol, rsrc, csrc, lld, nranks
    integer, intent(in), optional :: grid_order
    integer(c_int) :: order
    order = TESSERA_GRID_ROW_MAJOR
    if (present(grid_order)) order = int(grid_order, c_int)
    tessera_layout_create_block_cyclic = c_layout_block_cyclic(layout%handle, int(m, c_int64_t), &
        int(n, c_int64_t), int(mb, c_int64_t), int(nb, c_int64_t), int(nprow, c_int), &
        int(npcol, c_int), int(rsrc, c_int), int(csrc, c_int), order, int(nranks, c_int), &
        int(lld, c_int64_t), int(TESSERA_COL_MAJOR, c_int))
  end function

  ! Rank `rank`'s (0-based) local block: rows x cols (ScaLAPACK's numroc), leading dimension ld.
  integer function tessera_layout_local_block(layout, rank, rows, cols, ld)
    type(tessera_layout), intent(in) :: layout
    integer, intent(in) :: rank
    integer, intent(out) :: rows, cols, ld
    integer(c_int64_t) :: r, c, l, elements
    integer(c_int) :: storage
    tessera_layout_local_block = c_layout_local_block(layout%handle, int(rank, c_int), r, c, l, &
                                                      storage, elements)
    rows = int(r)
    cols = int(c)
    ld = int(l)
  end function

  integer function tessera_layout_destroy(layout)
    type(tessera_layout), intent(inout) :: layout
    tessera_layout_destroy = c_layout_destroy(layout%handle)
    layout%handle = c_null_ptr
  end function

  ! B = beta * B + alpha * op(A), collectively over comm (an integer handle). The sub-matrix
  ! B(ib : ib + m - 1, jb : jb + n - 1) and the matching part of A from (ia, ja), 1-based as in
  ! p?gemr2d and p?tran; without them the whole of B. dtype: TESSERA_F32 ... TESSERA_C128.
  ! relabel (default .false.): B may be written with its owners permuted (the whole of B, beta =
  ! 0 only; see tessera_redistribute_plan_target). max_buffer_bytes: the most this rank's send
  ! and receive buffers hold together (default 0: its larger local block).
  integer function tessera_redistribute_plan_create(plan, a, b, op, dtype, comm, m, n, ia, ja, ib, &
                                                    jb, relabel, max_buffer_bytes)
    type(tessera_redistribute_plan), intent(out) :: plan
    type(tessera_layout), intent(in) :: a, b
    integer, intent(in) :: op, dtype, comm
    integer, intent(in), optional :: m, n, ia, ja, ib, jb
    logical, intent(in), optional :: relabel
    integer(c_int64_t), intent(in), optional :: max_buffer_bytes
    integer(c_int64_t) :: rows, cols, a_row, a_col, b_row, b_col, limit
    integer(c_int) :: flags
    rows = -1
    cols = -1
    a_row = 0
    a_col = 0
    b_row = 0
    b_col = 0
    flags = 0
    limit = 0
    if (present(m)) rows = m
    if (present(n)) cols = n
    if (present(ia)) a_row = ia - 1
    if (present(ja)) a_col = ja - 1
    if (present(ib)) b_row = ib - 1
    if (present(jb)) b_col = jb - 1
    if (present(relabel)) then
      if (relabel) flags = 1 ! TESSERA_REDISTRIBUTE_RELABEL
    end if
    if (present(max_buffer_bytes)) limit = max_buffer_bytes
    tessera_redistribute_plan_create = c_plan_create(plan%handle, a%handle, b%handle, &
        int(op, c_int), int(dtype, c_int), rows, cols, a_row, a_col, b_row, b_col, flags, limit, &
        int(comm, c_int))
  end function

  ! relabelling(r + 1): the rank (0-based) that holds, in the plan's target layout, what B's
  ! layout gives rank r; size(relabelling) must be the communicator's size. The identity without
  ! relabel.
  integer function tessera_redistribute_plan_relabelling(plan, relabelling)
    type(tessera_redistribute_plan), intent(in) :: plan
    integer, intent(out) :: relabelling(:)
    integer(c_int) :: r(max(1, size(relabelling)))
    tessera_redistribute_plan_relabelling = c_plan_relabelling(plan%handle, r, &
                                                               int(size(relabelling), c_int))
    relabelling = int(r(1:size(relabelling)))
  end function

  ! The layout execute writes B in (B's own without relabel): a new layout, for the caller to
  ! destroy. Each rank's b must be its local array of it (tessera_layout_local_block).
  integer function tessera_redistribute_plan_target(plan, target)
    type(tessera_redistribute_plan), intent(in) :: plan
    type(tessera_layout), intent(out) :: target
    tessera_redistribute_plan_target = c_plan_target(plan%handle, target%handle)
  end function

  ! The send plus receive buffer bytes the plan holds on this rank, and the rounds each execute
  ! exchanges in (the same on every rank).
  integer function tessera_redistribute_plan_buffer(plan, buffer_bytes, rounds)
    type(tessera_redistribute_plan), intent(in) :: plan
    integer(c_int64_t), intent(out) :: buffer_bytes, rounds
    tessera_redistribute_plan_buffer = c_plan_buffer(plan%handle, buffer_bytes, rounds)
  end function

  integer function tessera_redistribute_plan_destroy(plan)
    type(tessera_redistribute_plan), intent(inout) :: plan
    tessera_redistribute_plan_destroy = c_plan_destroy(plan%handle)
    plan%handle = c_null_ptr
  end function

  ! Each execute: collective; a and b are this rank's local arrays of A and B (a rank holding
  ! nothing passes empty arrays). alpha (default 1) and beta (default 0) are real(c_double) for
  ! real arrays, complex(c_double_complex) for complex ones; beta = 0 never reads b.

  integer function redistribute_execute_r32(plan, a, b, alpha, beta)
    type(tessera_redistribute_plan), intent(in) :: plan
    real(c_float), intent(in), target, contiguous :: a(:, :)
    real(c_float), intent(inout), target, contiguous :: b(:, :)
    real(c_double), intent(in), optional :: alpha, beta
    redistribute_execute_r32 = c_plan_execute(plan%handle, real_or(alpha, 1d0), address(a), &
                                              real_or(beta, 0d0), address(b))
  contains
    type(c_ptr) function address(x)
      real(c_float), intent(in), target, contiguous :: x(:, :)
      address = c_null_ptr
      if (size(x) > 0) address = c_loc(x)
    end function
  end function

  integer function redistribute_execute_r64(plan, a, b, alpha, beta)
    type(tessera_redistribute_plan), intent(in) :: plan
    real(c_double), intent(in), target, contiguous :: a(:, :)
    real(c_double), intent(inout), target, contiguous :: b(:, :)
    real(c_double), intent(in), optional :: alpha, beta
    redistribute_execute_r64 = c_plan_execute(plan%handle, real_or(alpha, 1d0), address(a), &
                                              real_or(beta, 0d0), address(b))
  contains
    type(c_ptr) function address(x)
      real(c_double), intent(in), target, contiguous :: x(:, :)
      address = c_null_ptr
      if (size(x) > 0) address = c_loc(x)
    end function
  end function

  integer function redistribute_execute_c64(plan, a, b, alpha, beta)
    type(tessera_redistribute_plan), intent(in) :: plan
    complex(c_float_complex), intent(in), target, contiguous :: a(:, :)
    complex(c_float_complex), intent(inout), target, contiguous :: b(:, :)
    complex(c_double_complex), intent(in), optional :: alpha, beta
    redistribute_execute_c64 = c_plan_execute_complex(plan%handle, complex_or(alpha, (1d0, 0d0)), &
        address(a), complex_or(beta, (0d0, 0d0)), address(b))
  contains
    type(c_ptr) function address(x)
      complex(c_float_complex), intent(in), target, contiguous :: x(:, :)
      address = c_null_ptr
      if (size(x) > 0) address = c_loc(x)
    end function
  end function

  integer function redistribute_execute_c128(plan, a, b, alpha, beta)
    type(tessera_redistribute_plan), intent(in) :: plan
    complex(c_double_complex), intent(in), target, contiguous :: a(:, :)
    complex(c_double_complex), intent(inout), target, contiguous :: b(:, :)
    complex(c_double_complex), intent(in), optional :: alpha, beta
    redistribute_execute_c128 = c_plan_execute_complex(plan%handle, complex_or(alpha, (1d0, 0d0)), &
        address(a), complex_or(beta, (0d0, 0d0)), address(b))
  contains
    type(c_ptr) function address(x)
      complex(c_double_complex), intent(in), target, contiguous :: x(:, :)
      address = c_null_ptr
      if (size(x) > 0) address = c_loc(x)
    end function
  end function

  real(c_double) function real_or(x, default)
    real(c_double), intent(in), optional :: x
    real(c_double), intent(in) :: default
    real_or = default
    if (present(x)) real_or = x
  end function

  complex(c_double_complex) function complex_or(x, default)
    complex(c_double_complex), intent(in), optional :: x
    complex(c_double_complex), intent(in) :: default
    complex_or = default
    if (present(x)) complex_or = x
  end function

  ! HDF5: the 2-D dataset `dataset` of `file` read into (written from) this rank's local array a
  ! of `layout` (a(lld, local columns); a rank holding nothing passes an empty array), the element
  ! type from a's kind (f32 <-> f64 and c64 <-> c128 convert on read). Collective over comm. The
  ! file moves in row blocks redistributed to and from the layout: about three times m * n /
  ! nranks elements of extra memory per rank for a layout that spreads the matrix evenly, about
  ! memory_limit bytes (integer(c_int64_t)) when it is given (> 0).

  integer function read_hdf5_r32(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    real(c_float), intent(inout), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    read_hdf5_r32 = c_h5_read_layout(c_string(file), c_string(dataset), layout%handle, &
        0_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  integer function write_hdf5_r32(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    real(c_float), intent(in), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    write_hdf5_r32 = c_h5_write_layout(c_string(file), c_string(dataset), layout%handle, &
        0_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  integer function read_hdf5_r64(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    real(c_double), intent(inout), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    read_hdf5_r64 = c_h5_read_layout(c_string(file), c_string(dataset), layout%handle, &
        1_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  integer function write_hdf5_r64(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    real(c_double), intent(in), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    write_hdf5_r64 = c_h5_write_layout(c_string(file), c_string(dataset), layout%handle, &
        1_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  integer function read_hdf5_c64(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    complex(c_float_complex), intent(inout), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    read_hdf5_c64 = c_h5_read_layout(c_string(file), c_string(dataset), layout%handle, &
        2_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  integer function write_hdf5_c64(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    complex(c_float_complex), intent(in), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    write_hdf5_c64 = c_h5_write_layout(c_string(file), c_string(dataset), layout%handle, &
        2_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  integer function read_hdf5_c128(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    complex(c_double_complex), intent(inout), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    read_hdf5_c128 = c_h5_read_layout(c_string(file), c_string(dataset), layout%handle, &
        3_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  integer function write_hdf5_c128(layout, file, dataset, a, comm, memory_limit)
    type(tessera_layout), intent(in) :: layout
    character(len=*), intent(in) :: file, dataset
    complex(c_double_complex), intent(in), target, contiguous :: a(:, :)
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in), optional :: memory_limit
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    write_hdf5_c128 = c_h5_write_layout(c_string(file), c_string(dataset), layout%handle, &
        3_c_int, p, limit_or_none(memory_limit), int(comm, c_int))
  end function

  function c_string(s)
    character(len=*), intent(in) :: s
    character(kind=c_char) :: c_string(len(s) + 1)
    integer :: k
    do k = 1, len(s)
      c_string(k) = s(k:k)
    end do
    c_string(len(s) + 1) = c_null_char
  end function

  integer(c_int64_t) function limit_or_none(x)
    integer(c_int64_t), intent(in), optional :: x
    limit_or_none = 0
    if (present(x)) limit_or_none = x
  end function

end module tessera_redistribute

! SPDX-License-Identifier: BSD-3-Clause
! Fortran callers under Open MPI reach mpi_allreduce_ in libmpi_mpifh, which calls PMPI directly,
! so only optireduce's own Fortran entry points can catch them. This program makes the calls a
! Fortran training code makes (REAL sums, in place and not) plus pass-through ones, checks the
! results, and prints how many calls the library should have counted; the driver compares that
! with the job summary (Fortran cannot easily look up optireduce_get_stats).
!
! The data are small integers, so every summation order gives the exact result. The program's own
! bookkeeping uses MPI_Reduce/MPI_Bcast, which the library does not intercept or count.
program allreduce_fortran
  use mpi
  implicit none
  integer, parameter :: n = 100003
  real, allocatable :: x(:), y(:)
  double precision, allocatable :: dx(:), dy(:)
  integer :: ierr, rank, nranks, i, fails, total_fails, dup
  integer :: engine_calls, passthrough_calls
  integer(kind=8) :: engine_bytes

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  allocate(x(n), y(n), dx(n), dy(n))
  fails = 0
  engine_calls = 0
  passthrough_calls = 0
  engine_bytes = 0

  ! REAL SUM into a separate buffer: eligible.
  call fill(x)
  y = -1.0
  call MPI_Allreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_sum('REAL SUM', y, n)
  call count_engine(n)

  ! REAL SUM with MPI_IN_PLACE: the sentinel must be recognised, or the library would read the
  ! sentinel's storage as data.
  call fill(y)
  call MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_sum('REAL SUM in place', y, n)
  call count_engine(n)

  ! A single element, in place: eligible too when OPTIREDUCE_MIN_BYTES=0.
  call fill(y)
  call MPI_Allreduce(MPI_IN_PLACE, y, 1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_sum('REAL SUM 1 element', y, 1)
  call count_engine(1)

  ! On a duplicate communicator (handle conversion from Fortran integers).
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call fill(x)
  call MPI_Allreduce(x, y, n, MPI_REAL, MPI_SUM, dup, ierr)
  call expect_sum('REAL SUM on dup', y, n)
  call count_engine(n)
  call MPI_Comm_free(dup, ierr)

  ! Pass-through calls: other type, other op, in place.
  do i = 1, n
    dx(i) = dble(rank + 1) + dble(mod(i, 7))
  end do
  call MPI_Allreduce(dx, dy, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (dy(i) /= dble(nranks * (nranks + 1) / 2 + nranks * mod(i, 7))) then
      call report('DOUBLE PRECISION SUM', i)
      exit
    end if
  end do
  passthrough_calls = passthrough_calls + 1

  call fill(y)
  call MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (y(i) /= real(nranks + mod(i, 7))) then
      call report('REAL MAX in place', i)
      exit
    end if
  end do
  passthrough_calls = passthrough_calls + 1

  call MPI_Reduce(fails, total_fails, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(total_fails, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    ! Every rank made the same calls, so the job totals are nranks times this rank's.
    write(*, '(a,i0,a,i0,a,i0,a,i0)') 'EXPECTED_TOTALS ranks=', nranks, &
      ' engine_calls=', engine_calls * nranks, ' passthrough_calls=', passthrough_calls * nranks, &
      ' fallback_calls=0 engine_bytes=', engine_bytes * nranks
    do i = 0, nranks - 1
      write(*, '(a,i0,a,i0,a,i0,a,i0)') 'EXPECTED_RANK rank=', i, ' engine_calls=', engine_calls, &
        ' passthrough_calls=', passthrough_calls, ' fallback_calls=0 engine_bytes=', engine_bytes
    end do
    if (total_fails == 0) then
      write(*, '(a)') 'PASS fortran.allreduce'
    else
      write(*, '(a,i0,a)') 'FAIL fortran.allreduce: ', total_fails, ' wrong results'
    end if
  end if
  call MPI_Finalize(ierr)
  if (total_fails /= 0) error stop 1

contains

  subroutine fill(a)
    real, intent(out) :: a(:)
    integer :: k
    do k = 1, size(a)
      a(k) = real(rank + 1) + real(mod(k, 7))
    end do
  end subroutine fill

  subroutine expect_sum(what, a, m)
    character(len=*), intent(in) :: what
    real, intent(in) :: a(:)
    integer, intent(in) :: m
    integer :: k
    do k = 1, m
      if (a(k) /= real(nranks * (nranks + 1) / 2 + nranks * mod(k, 7))) then
        call report(what, k)
        return
      end if
    end do
  end subroutine expect_sum

  subroutine count_engine(m)
    integer, intent(in) :: m
    engine_calls = engine_calls + 1
    engine_bytes = engine_bytes + 4_8 * m
  end subroutine count_engine

  subroutine report(what, k)
    character(len=*), intent(in) :: what
    integer, intent(in) :: k
    write(*, '(a,i0,a,a,a,i0)') 'FAIL rank ', rank, ': ', what, ' wrong at element ', k
    fails = fails + 1
  end subroutine report

end program allreduce_fortran

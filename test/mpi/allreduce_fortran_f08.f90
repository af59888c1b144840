! SPDX-License-Identifier: BSD-3-Clause
! The `use mpi_f08` binding: under Open MPI it enters through mpi_allreduce_f08_, a different
! symbol from `use mpi`'s mpi_allreduce_, and its handles are derived types. Same checks as
! allreduce_fortran.f90, fewer calls: exact small-integer data, EXPECTED_* lines for the driver.
program allreduce_fortran_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 65537
  real, allocatable :: x(:), y(:)
  double precision, allocatable :: dx(:), dy(:)
  integer :: rank, nranks, i, fails, total_fails

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  allocate(x(n), y(n), dx(n), dy(n))
  fails = 0

  do i = 1, n
    x(i) = real(rank + 1) + real(mod(i, 7))
  end do
  y = -1.0
  call MPI_Allreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  call expect_sum('f08 REAL SUM')

  y = x
  call MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  call expect_sum('f08 REAL SUM in place')

  dx = dble(x)
  call MPI_Allreduce(dx, dy, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  do i = 1, n
    if (dy(i) /= dble(nranks * (nranks + 1) / 2 + nranks * mod(i, 7))) then
      write(*, '(a,i0,a,i0)') 'FAIL rank ', rank, ': f08 DOUBLE PRECISION SUM wrong at ', i
      fails = fails + 1
      exit
    end if
  end do

  call MPI_Reduce(fails, total_fails, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  call MPI_Bcast(total_fails, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    write(*, '(a,i0,a,i0,a,i0,a,i0)') 'EXPECTED_TOTALS ranks=', nranks, ' engine_calls=', &
      2 * nranks, ' passthrough_calls=', nranks, ' fallback_calls=0 engine_bytes=', 8 * n * nranks
    do i = 0, nranks - 1
      write(*, '(a,i0,a,i0)') 'EXPECTED_RANK rank=', i, &
        ' engine_calls=2 passthrough_calls=1 fallback_calls=0 engine_bytes=', 8 * n
    end do
    if (total_fails == 0) then
      write(*, '(a)') 'PASS fortran.allreduce_f08'
    else
      write(*, '(a,i0,a)') 'FAIL fortran.allreduce_f08: ', total_fails, ' wrong results'
    end if
  end if
  call MPI_Finalize()
  if (total_fails /= 0) error stop 1

contains

  subroutine expect_sum(what)
    character(len=*), intent(in) :: what
    integer :: k
    do k = 1, n
      if (y(k) /= real(nranks * (nranks + 1) / 2 + nranks * mod(k, 7))) then
        write(*, '(a,i0,a,a,a,i0)') 'FAIL rank ', rank, ': ', what, ' wrong at element ', k
        fails = fails + 1
        return
      end if
    end do
  end subroutine expect_sum

end program allreduce_fortran_f08

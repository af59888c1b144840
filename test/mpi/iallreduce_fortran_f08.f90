! SPDX-License-Identifier: BSD-3-Clause
! MPI_Iallreduce and the completion routines from `use mpi_f08` under Open MPI: its own symbols
! (mpi_iallreduce_f08_, mpi_wait_f08_, ...), handles as derived types. Fewer calls than
! iallreduce_fortran.f90: Wait, Test, Waitall with an ordinary request, Waitany, Request_free.
program iallreduce_fortran_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 65537
  real, allocatable :: x(:), y(:), z(:)
  type(MPI_Request) :: reqs(2)
  integer :: rank, nranks, i, idx, fails, total_fails, sbuf, rbuf
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  allocate(x(n), y(n), z(n))
  fails = 0
  do i = 1, n
    x(i) = real(rank + 1) + real(mod(i, 7))
  end do

  y = -1.0
  call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  call expect_sum('f08 Wait', y)

  y = x
  call MPI_Iallreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1))
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE)
  end do
  call expect_sum('f08 Test in place', y)

  y = -1.0
  sbuf = rank
  call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(rbuf, 1, MPI_INTEGER, mod(rank + nranks - 1, nranks), 3, MPI_COMM_WORLD, reqs(2))
  call MPI_Send(sbuf, 1, MPI_INTEGER, mod(rank + 1, nranks), 3, MPI_COMM_WORLD)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call expect_sum('f08 Waitall', y)
  if (rbuf /= mod(rank + nranks - 1, nranks)) call report('f08 Waitall ring', rbuf)

  y = -1.0
  call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(rbuf, 1, MPI_INTEGER, mod(rank + nranks - 1, nranks), 4, MPI_COMM_WORLD, reqs(2))
  call MPI_Send(sbuf, 1, MPI_INTEGER, mod(rank + 1, nranks), 4, MPI_COMM_WORLD)
  do i = 1, 3
    call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE)
    if (idx == MPI_UNDEFINED) exit
  end do
  if (idx /= MPI_UNDEFINED) call report('f08 Waitany reported more than 2', idx)
  call expect_sum('f08 Waitany', y)

  ! Freed before completion; the blocking allreduce that follows comes after it.
  z = -1.0
  call MPI_Iallreduce(x, z, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1))
  call MPI_Request_free(reqs(1))
  y = x
  call MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  call expect_sum('f08 freed request', z)

  call MPI_Reduce(fails, total_fails, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  call MPI_Bcast(total_fails, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    ! Five Iallreduces and one Allreduce on the engine per rank; the point-to-point calls are not
    ! counted.
    write(*, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'EXPECTED_TOTALS ranks=', nranks, ' engine_calls=', &
      6 * nranks, ' passthrough_calls=0 fallback_calls=0 engine_bytes=', 24 * n * nranks, &
      ' nonblocking_calls=', 5 * nranks
    do i = 0, nranks - 1
      write(*, '(a,i0,a,i0,a)') 'EXPECTED_RANK rank=', i, &
        ' engine_calls=6 passthrough_calls=0 fallback_calls=0 engine_bytes=', 24 * n, ' nonblocking_calls=5'
    end do
    if (total_fails == 0) then
      write(*, '(a)') 'PASS fortran.iallreduce_f08'
    else
      write(*, '(a,i0,a)') 'FAIL fortran.iallreduce_f08: ', total_fails, ' wrong results'
    end if
  end if
  call MPI_Finalize()
  if (total_fails /= 0) error stop 1

contains

  subroutine expect_sum(what, a)
    character(len=*), intent(in) :: what
    real, intent(in) :: a(:)
    integer :: k
    do k = 1, n
      if (a(k) /= real(nranks * (nranks + 1) / 2 + nranks * mod(k, 7))) then
        call report(what, k)
        return
      end if
    end do
  end subroutine expect_sum

  subroutine report(what, k)
    character(len=*), intent(in) :: what
    integer, intent(in) :: k
    write(*, '(a,i0,a,a,a,i0)') 'FAIL rank ', rank, ': ', what, ' at ', k
    fails = fails + 1
  end subroutine report

end program iallreduce_fortran_f08

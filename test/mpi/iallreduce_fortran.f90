! SPDX-License-Identifier: BSD-3-Clause
! MPI_Iallreduce from Fortran under Open MPI (`use mpi`): Open MPI's Fortran routines call PMPI
! directly, so only optireduce's Fortran entry points see these calls and can complete the
! engine's requests. Every completion routine a Fortran code may use is exercised, alone and on
! arrays mixing engine requests with ordinary ones; the driver compares the printed expectations
! with the job summary, nonblocking_calls included.
program iallreduce_fortran
  use mpi
  implicit none
  integer, parameter :: n = 70001
  real, allocatable :: x(:), y(:), z(:)
  double precision :: dx(8), dy(8)
  integer :: ierr, rank, nranks, i, fails, total_fails, idx, outcount, nb
  integer :: reqs(4), indices(4), statuses(MPI_STATUS_SIZE, 4), status(MPI_STATUS_SIZE)
  integer :: sbuf, rbuf
  logical :: flag
  integer :: engine_calls, passthrough_calls, fallback_calls, info, dup
  integer(kind=8) :: engine_bytes

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  allocate(x(n), y(n), z(n))
  fails = 0
  engine_calls = 0
  passthrough_calls = 0
  fallback_calls = 0
  engine_bytes = 0
  nb = 0

  ! Iallreduce + Wait, out of place and in place.
  call fill(x)
  y = -1.0
  call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Wait(reqs(1), status, ierr)
  if (reqs(1) /= MPI_REQUEST_NULL) call report('MPI_Wait left the request', 0)
  call expect_sum('Wait', y)
  call count_engine()
  call fill(y)
  call MPI_Iallreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call expect_sum('Wait in place', y)
  call count_engine()

  ! Test loop.
  call fill(x)
  call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, status, ierr)
  end do
  call expect_sum('Test', y)
  call count_engine()

  ! Waitall over engine, ring exchange and a DOUBLE PRECISION Iallreduce (passed through).
  call start_mixed()
  call MPI_Waitall(4, reqs, statuses, ierr)
  call check_mixed('Waitall')

  ! Testall loop.
  call start_mixed()
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(4, reqs, flag, statuses, ierr)
  end do
  call check_mixed('Testall')

  ! Waitany until MPI_UNDEFINED.
  call start_mixed()
  do i = 1, 5
    call MPI_Waitany(4, reqs, idx, status, ierr)
    if (idx == MPI_UNDEFINED) exit
  end do
  if (idx /= MPI_UNDEFINED) call report('Waitany reported more than 4', 0)
  call check_mixed('Waitany')

  ! Testany loop.
  call start_mixed()
  i = 0
  do while (i < 4)
    call MPI_Testany(4, reqs, idx, flag, status, ierr)
    if (flag .and. idx /= MPI_UNDEFINED) i = i + 1
    if (flag .and. idx == MPI_UNDEFINED) exit
  end do
  call check_mixed('Testany')

  ! Waitsome and Testsome.
  call start_mixed()
  i = 0
  do while (i < 4)
    call MPI_Waitsome(4, reqs, outcount, indices, statuses, ierr)
    if (outcount == MPI_UNDEFINED) exit
    i = i + outcount
  end do
  call check_mixed('Waitsome')
  call start_mixed()
  i = 0
  do while (i < 4)
    call MPI_Testsome(4, reqs, outcount, indices, statuses, ierr)
    if (outcount == MPI_UNDEFINED) exit
    i = i + outcount
  end do
  call check_mixed('Testsome')

  ! Request_get_status, then Wait.
  call fill(x)
  call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Request_get_status(reqs(1), flag, status, ierr)
  end do
  call MPI_Wait(reqs(1), status, ierr)
  call expect_sum('Request_get_status', y)
  call count_engine()

  ! Request_free before completion: the next blocking allreduce on the communicator comes after
  ! the freed operation, so its result is final once that returns.
  call fill(x)
  z = -1.0
  call MPI_Iallreduce(x, z, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Request_free(reqs(1), ierr)
  if (reqs(1) /= MPI_REQUEST_NULL) call report('MPI_Request_free left the request', 0)
  call count_engine()
  call fill(y)
  call MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  engine_calls = engine_calls + 1
  engine_bytes = engine_bytes + 4_8 * n
  call expect_sum('freed request', z)

  ! The "optireduce" hint set from Fortran switches the engine off on that communicator: both
  ! forms fall back to MPI, with the same results.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'optireduce', 'off', ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_set_info(dup, info, ierr)
  call fill(y)
  call MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_REAL, MPI_SUM, dup, ierr)
  call expect_sum('hint off, blocking', y)
  call fill(x)
  call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, dup, reqs(1), ierr)
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call expect_sum('hint off, nonblocking', y)
  passthrough_calls = passthrough_calls + 2
  fallback_calls = fallback_calls + 2
  call MPI_Comm_free(dup, ierr)
  call MPI_Info_free(info, ierr)

  call MPI_Reduce(fails, total_fails, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(total_fails, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write(*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') 'EXPECTED_TOTALS ranks=', nranks, &
      ' engine_calls=', engine_calls * nranks, ' passthrough_calls=', passthrough_calls * nranks, &
      ' fallback_calls=', fallback_calls * nranks, ' engine_bytes=', engine_bytes * nranks, &
      ' nonblocking_calls=', nb * nranks
    do i = 0, nranks - 1
      write(*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') 'EXPECTED_RANK rank=', i, ' engine_calls=', engine_calls, &
        ' passthrough_calls=', passthrough_calls, ' fallback_calls=', fallback_calls, ' engine_bytes=', &
        engine_bytes, ' nonblocking_calls=', nb
    end do
    if (total_fails == 0) then
      write(*, '(a)') 'PASS fortran.iallreduce'
    else
      write(*, '(a,i0,a)') 'FAIL fortran.iallreduce: ', total_fails, ' wrong results'
    end if
  end if
  call MPI_Finalize(ierr)
  if (total_fails /= 0) error stop 1

contains

  subroutine start_mixed()
    call fill(x)
    y = -1.0
    sbuf = 1000 + rank
    rbuf = -1
    dx = dble(rank)
    call MPI_Iallreduce(x, y, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, mod(rank + nranks - 1, nranks), 7, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Isend(sbuf, 1, MPI_INTEGER, mod(rank + 1, nranks), 7, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Iallreduce(dx, dy, 8, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(4), ierr)
    call count_engine()
    passthrough_calls = passthrough_calls + 1
  end subroutine start_mixed

  subroutine check_mixed(what)
    character(len=*), intent(in) :: what
    integer :: k
    do k = 1, 4
      if (reqs(k) /= MPI_REQUEST_NULL) call report(what // ': request left active', k)
    end do
    call expect_sum(what, y)
    if (rbuf /= 1000 + mod(rank + nranks - 1, nranks)) call report(what // ': ring receive', rbuf)
    if (dy(1) /= dble(nranks * (nranks - 1) / 2)) call report(what // ': double Iallreduce', 1)
  end subroutine check_mixed

  subroutine fill(a)
    real, intent(out) :: a(:)
    integer :: k
    do k = 1, size(a)
      a(k) = real(rank + 1) + real(mod(k, 7))
    end do
  end subroutine fill

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

  subroutine count_engine()
    engine_calls = engine_calls + 1
    engine_bytes = engine_bytes + 4_8 * n
    nb = nb + 1
  end subroutine count_engine

  subroutine report(what, k)
    character(len=*), intent(in) :: what
    integer, intent(in) :: k
    write(*, '(a,i0,a,a,a,i0)') 'FAIL rank ', rank, ': ', what, ' at ', k
    fails = fails + 1
  end subroutine report

end program iallreduce_fortran

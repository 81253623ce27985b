! level3_check_f -- self-checking Fortran client of the Level-3 BLAS.
!
! A plain Fortran 90 program linked against the system BLAS.  It calls
! DGEMM, ZGEMM, SSYRK, CHERK, DTRSM, ZTRMM, DSYMM and ZHER2K on a few shapes
! each (leading dimensions larger than the row count, padding rows filled
! with data that must stay untouched) and compares every result with naive
! loops evaluated in extended precision.  For the rank-k updates the other
! triangle of C must be unchanged bit for bit, and CHERK/ZHER2K must leave a
! zero imaginary part on the diagonal.
!
! Error measure: max |out - ref| / max(bound), bound being the sum of the
! magnitudes of the terms that form an entry (for DTRSM: max |x_ref|).
! Tolerance 1e-10 (double) / 1e-4 (single).
!
! Prints one line per failing case and finally
!   level3_check_f: N passed, M failed
! and stops with code 1 if anything failed.
program level3_check_f
  implicit none
  integer, parameter :: sp = kind(1.0), dp = kind(1.0d0)
  integer, parameter :: ep = max(selected_real_kind(18), kind(1.0d0))
  real(ep), parameter :: tol_d = 1.0e-10_ep, tol_s = 1.0e-4_ep
  integer :: npass, nfail
  integer(8) :: state
  external :: dgemm, zgemm, ssyrk, cherk, dtrsm, ztrmm, dsymm, zher2k

  npass = 0
  nfail = 0
  state = 88172645463325252_8

  call test_dgemm('N', 'N', 5, 7, 3)
  call test_dgemm('T', 'N', 13, 4, 9)
  call test_dgemm('N', 'T', 8, 8, 17)
  call test_dgemm('T', 'T', 1, 6, 33)

  call test_zgemm('N', 'N', 6, 5, 4)
  call test_zgemm('C', 'N', 9, 3, 11)
  call test_zgemm('N', 'T', 4, 10, 7)
  call test_zgemm('C', 'C', 7, 7, 1)

  call test_ssyrk('U', 'N', 7, 5)
  call test_ssyrk('L', 'T', 12, 9)
  call test_ssyrk('U', 'T', 1, 20)

  call test_cherk('L', 'N', 6, 4)
  call test_cherk('U', 'C', 9, 13)
  call test_cherk('U', 'N', 17, 2)

  call test_dtrsm('L', 'U', 'N', 'N', 7, 4)
  call test_dtrsm('R', 'L', 'T', 'U', 5, 9)
  call test_dtrsm('L', 'L', 'T', 'N', 12, 3)
  call test_dtrsm('R', 'U', 'N', 'U', 6, 1)

  call test_ztrmm('L', 'L', 'C', 'N', 6, 5)
  call test_ztrmm('R', 'U', 'N', 'U', 4, 8)
  call test_ztrmm('L', 'U', 'T', 'U', 9, 2)
  call test_ztrmm('R', 'L', 'C', 'N', 3, 11)

  call test_dsymm('L', 'U', 7, 5)
  call test_dsymm('R', 'L', 6, 9)
  call test_dsymm('L', 'L', 13, 1)

  call test_zher2k('U', 'N', 7, 4)
  call test_zher2k('L', 'C', 5, 10)
  call test_zher2k('L', 'N', 11, 1)

  write (*, '(a,i0,a,i0,a)') 'level3_check_f: ', npass, ' passed, ', nfail, ' failed'
  if (nfail /= 0) stop 1

contains

  ! xorshift64, uniform in [-1, 1)
  function urand() result(r)
    real(dp) :: r
    state = ieor(state, ishft(state, 13))
    state = ieor(state, ishft(state, -7))
    state = ieor(state, ishft(state, 17))
    r = real(ishft(state, -11), dp) * (2.0_dp**(-52)) - 1.0_dp
  end function urand

  subroutine fill_d(x)
    real(dp), intent(out) :: x(:, :)
    integer :: i, j
    do j = 1, size(x, 2)
      do i = 1, size(x, 1)
        x(i, j) = urand()
      end do
    end do
  end subroutine fill_d

  subroutine fill_s(x)
    real(sp), intent(out) :: x(:, :)
    integer :: i, j
    do j = 1, size(x, 2)
      do i = 1, size(x, 1)
        x(i, j) = real(urand(), sp)
      end do
    end do
  end subroutine fill_s

  subroutine fill_z(x)
    complex(dp), intent(out) :: x(:, :)
    integer :: i, j
    real(dp) :: re, im
    do j = 1, size(x, 2)
      do i = 1, size(x, 1)
        re = urand()
        im = urand()
        x(i, j) = cmplx(re, im, dp)
      end do
    end do
  end subroutine fill_z

  subroutine fill_c(x)
    complex(sp), intent(out) :: x(:, :)
    integer :: i, j
    real(dp) :: re, im
    do j = 1, size(x, 2)
      do i = 1, size(x, 1)
        re = urand()
        im = urand()
        x(i, j) = cmplx(re, im, sp)
      end do
    end do
  end subroutine fill_c

  function in_tri(uplo, i, j) result(r)
    character, intent(in) :: uplo
    integer, intent(in) :: i, j
    logical :: r
    if (uplo == 'U') then
      r = i <= j
    else
      r = i >= j
    end if
  end function in_tri

  function abs1(x) result(r)
    complex(ep), intent(in) :: x
    real(ep) :: r
    r = abs(real(x, ep)) + abs(aimag(x))
  end function abs1

  subroutine report(ok, what, err, tol)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    real(ep), intent(in) :: err, tol
    if (ok .and. err <= tol) then
      npass = npass + 1
    else
      nfail = nfail + 1
      write (*, '(a,a,a,es10.3,a,es10.3,a,l1)') 'FAIL ', trim(what), ' err=', &
        real(err, dp), ' tol=', real(tol, dp), ' untouched-ok=', ok
    end if
  end subroutine report

  function ratio(maxd, maxn) result(r)
    real(ep), intent(in) :: maxd, maxn
    real(ep) :: r
    if (maxn > 0) then
      r = maxd / maxn
    else
      r = maxd
    end if
  end function ratio

  ! ---------------------------------------------------------------- DGEMM
  subroutine test_dgemm(ta, tb, m, n, k)
    character, intent(in) :: ta, tb
    integer, intent(in) :: m, n, k
    real(dp), parameter :: alpha = 0.75_dp, beta = -1.25_dp
    real(dp), allocatable :: a(:, :), b(:, :), c(:, :), c0(:, :), a0(:, :), b0(:, :)
    integer :: ar, ac, br, bc, lda, ldb, ldc, i, j, l
    real(ep) :: s, sa, x, y, maxd, maxn, ref
    character(len=100) :: what
    logical :: ok

    if (ta == 'N') then
      ar = m; ac = k
    else
      ar = k; ac = m
    end if
    if (tb == 'N') then
      br = k; bc = n
    else
      br = n; bc = k
    end if
    lda = ar + 2; ldb = br + 3; ldc = m + 1
    allocate (a(lda, ac), b(ldb, bc), c(ldc, n))
    call fill_d(a); call fill_d(b); call fill_d(c)
    allocate (a0, source=a); allocate (b0, source=b); allocate (c0, source=c)
    call dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    maxd = 0; maxn = 0
    do j = 1, n
      do i = 1, m
        s = 0; sa = 0
        do l = 1, k
          if (ta == 'N') then
            x = a0(i, l)
          else
            x = a0(l, i)
          end if
          if (tb == 'N') then
            y = b0(l, j)
          else
            y = b0(j, l)
          end if
          s = s + x * y
          sa = sa + abs(x) * abs(y)
        end do
        ref = alpha * s + beta * real(c0(i, j), ep)
        maxd = max(maxd, abs(real(c(i, j), ep) - ref))
        maxn = max(maxn, abs(alpha) * sa + abs(beta) * abs(real(c0(i, j), ep)))
      end do
    end do
    ok = all(c(m + 1:, :) == c0(m + 1:, :)) .and. all(a == a0) .and. all(b == b0)
    write (what, '(a,a,a,a,a,3(a,i0),3(a,i0))') 'dgemm transa=', ta, ' transb=', tb, ' ', &
      'm=', m, ' n=', n, ' k=', k, ' lda=', lda, ' ldb=', ldb, ' ldc=', ldc
    call report(ok, what, ratio(maxd, maxn), tol_d)
  end subroutine test_dgemm

  ! ---------------------------------------------------------------- ZGEMM
  function zop(x, t, i, j) result(v)
    complex(dp), intent(in) :: x(:, :)
    character, intent(in) :: t
    integer, intent(in) :: i, j
    complex(ep) :: v
    if (t == 'N') then
      v = x(i, j)
    else if (t == 'T') then
      v = x(j, i)
    else
      v = conjg(x(j, i))
    end if
  end function zop

  subroutine test_zgemm(ta, tb, m, n, k)
    character, intent(in) :: ta, tb
    integer, intent(in) :: m, n, k
    complex(dp), parameter :: alpha = (0.75_dp, -0.5_dp), beta = (-0.5_dp, 0.25_dp)
    complex(dp), allocatable :: a(:, :), b(:, :), c(:, :), c0(:, :), a0(:, :), b0(:, :)
    integer :: ar, ac, br, bc, lda, ldb, ldc, i, j, l
    complex(ep) :: s, x, y, ref
    real(ep) :: sa, maxd, maxn
    character(len=100) :: what
    logical :: ok

    if (ta == 'N') then
      ar = m; ac = k
    else
      ar = k; ac = m
    end if
    if (tb == 'N') then
      br = k; bc = n
    else
      br = n; bc = k
    end if
    lda = ar + 3; ldb = br + 1; ldc = m + 2
    allocate (a(lda, ac), b(ldb, bc), c(ldc, n))
    call fill_z(a); call fill_z(b); call fill_z(c)
    allocate (a0, source=a); allocate (b0, source=b); allocate (c0, source=c)
    call zgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    maxd = 0; maxn = 0
    do j = 1, n
      do i = 1, m
        s = 0; sa = 0
        do l = 1, k
          x = zop(a0, ta, i, l)
          y = zop(b0, tb, l, j)
          s = s + x * y
          sa = sa + abs1(x) * abs1(y)
        end do
        ref = alpha * s + beta * c0(i, j)
        maxd = max(maxd, abs1(c(i, j) - ref))
        maxn = max(maxn, abs1(cmplx(alpha, kind=ep)) * sa + abs1(cmplx(beta, kind=ep)) * &
                   abs1(cmplx(c0(i, j), kind=ep)))
      end do
    end do
    ok = all(c(m + 1:, :) == c0(m + 1:, :)) .and. all(a == a0) .and. all(b == b0)
    write (what, '(a,a,a,a,a,3(a,i0),3(a,i0))') 'zgemm transa=', ta, ' transb=', tb, ' ', &
      'm=', m, ' n=', n, ' k=', k, ' lda=', lda, ' ldb=', ldb, ' ldc=', ldc
    call report(ok, what, ratio(maxd, maxn), tol_d)
  end subroutine test_zgemm

  ! ---------------------------------------------------------------- SSYRK
  subroutine test_ssyrk(uplo, trans, n, k)
    character, intent(in) :: uplo, trans
    integer, intent(in) :: n, k
    real(sp), parameter :: alpha = 1.25, beta = 0.5
    real(sp), allocatable :: a(:, :), c(:, :), c0(:, :), a0(:, :)
    integer :: lda, ldc, i, j, l
    real(ep) :: s, sa, xi, xj, maxd, maxn, ref
    character(len=100) :: what
    logical :: ok

    if (trans == 'N') then
      lda = n + 2
      allocate (a(lda, k))
    else
      lda = k + 3
      allocate (a(lda, n))
    end if
    ldc = n + 1
    allocate (c(ldc, n))
    call fill_s(a); call fill_s(c)
    allocate (a0, source=a); allocate (c0, source=c)
    call ssyrk(uplo, trans, n, k, alpha, a, lda, beta, c, ldc)
    maxd = 0; maxn = 0; ok = .true.
    do j = 1, n
      do i = 1, n
        if (.not. in_tri(uplo, i, j)) then
          if (c(i, j) /= c0(i, j)) ok = .false.
          cycle
        end if
        s = 0; sa = 0
        do l = 1, k
          if (trans == 'N') then
            xi = a0(i, l); xj = a0(j, l)
          else
            xi = a0(l, i); xj = a0(l, j)
          end if
          s = s + xi * xj
          sa = sa + abs(xi) * abs(xj)
        end do
        ref = alpha * s + beta * real(c0(i, j), ep)
        maxd = max(maxd, abs(real(c(i, j), ep) - ref))
        maxn = max(maxn, abs(alpha) * sa + abs(beta) * abs(real(c0(i, j), ep)))
      end do
    end do
    ok = ok .and. all(c(n + 1:, :) == c0(n + 1:, :)) .and. all(a == a0)
    write (what, '(a,a,a,a,a,2(a,i0),2(a,i0))') 'ssyrk uplo=', uplo, ' trans=', trans, ' ', &
      'n=', n, ' k=', k, ' lda=', lda, ' ldc=', ldc
    call report(ok, what, ratio(maxd, maxn), tol_s)
  end subroutine test_ssyrk

  ! ---------------------------------------------------------------- CHERK
  subroutine test_cherk(uplo, trans, n, k)
    character, intent(in) :: uplo, trans
    integer, intent(in) :: n, k
    real(sp), parameter :: alpha = -0.75, beta = 1.5
    complex(sp), allocatable :: a(:, :), c(:, :), c0(:, :), a0(:, :)
    integer :: lda, ldc, i, j, l
    complex(ep) :: s, xi, xj, ref
    real(ep) :: sa, maxd, maxn
    character(len=100) :: what
    logical :: ok

    if (trans == 'N') then
      lda = n + 1
      allocate (a(lda, k))
    else
      lda = k + 2
      allocate (a(lda, n))
    end if
    ldc = n + 3
    allocate (c(ldc, n))
    call fill_c(a); call fill_c(c)
    allocate (a0, source=a); allocate (c0, source=c)
    call cherk(uplo, trans, n, k, alpha, a, lda, beta, c, ldc)
    maxd = 0; maxn = 0; ok = .true.
    do j = 1, n
      do i = 1, n
        if (.not. in_tri(uplo, i, j)) then
          if (c(i, j) /= c0(i, j)) ok = .false.
          cycle
        end if
        s = 0; sa = 0
        do l = 1, k
          if (trans == 'N') then          ! A A^H
            xi = a0(i, l); xj = a0(j, l)
          else                            ! A^H A
            xi = conjg(cmplx(a0(l, i), kind=ep)); xj = conjg(cmplx(a0(l, j), kind=ep))
          end if
          s = s + xi * conjg(xj)
          sa = sa + abs1(xi) * abs1(xj)
        end do
        if (i == j) then                  ! diagonal: imaginary parts ignored / zeroed
          ref = cmplx(alpha * real(s, ep) + beta * real(c0(i, i), ep), 0, ep)
          if (aimag(c(i, i)) /= 0) ok = .false.
          maxn = max(maxn, abs(alpha) * sa + abs(beta) * abs(real(c0(i, i), ep)))
        else
          ref = alpha * s + beta * c0(i, j)
          maxn = max(maxn, abs(alpha) * sa + abs(beta) * abs1(cmplx(c0(i, j), kind=ep)))
        end if
        maxd = max(maxd, abs1(c(i, j) - ref))
      end do
    end do
    ok = ok .and. all(c(n + 1:, :) == c0(n + 1:, :)) .and. all(a == a0)
    write (what, '(a,a,a,a,a,2(a,i0),2(a,i0))') 'cherk uplo=', uplo, ' trans=', trans, ' ', &
      'n=', n, ' k=', k, ' lda=', lda, ' ldc=', ldc
    call report(ok, what, ratio(maxd, maxn), tol_s)
  end subroutine test_cherk

  ! triangular test matrix: dominant diagonal (non-unit), small off-diagonal
  ! entries (unit), garbage in the unreferenced triangle / unit diagonal
  subroutine fill_tri_d(a, dim, uplo, diag)
    real(dp), intent(out) :: a(:, :)
    integer, intent(in) :: dim
    character, intent(in) :: uplo, diag
    integer :: i, j
    real(dp) :: scale
    call fill_d(a)
    scale = 1.0_dp
    if (diag == 'U') scale = 0.5_dp / dim
    do j = 1, dim
      do i = 1, dim
        if (i == j) then
          if (diag == 'U') then
            a(i, i) = 300.0_dp + a(i, i)
          else
            a(i, i) = sign(dim + 1.0_dp + abs(a(i, i)), a(i, i))
          end if
        else if (in_tri(uplo, i, j)) then
          a(i, j) = scale * a(i, j)
        else
          a(i, j) = 500.0_dp + a(i, j)
        end if
      end do
    end do
  end subroutine fill_tri_d

  ! element (i,j) of op(T) for the triangular matrix in a
  function dtri(a, uplo, trans, diag, i, j) result(v)
    real(dp), intent(in) :: a(:, :)
    character, intent(in) :: uplo, trans, diag
    integer, intent(in) :: i, j
    real(ep) :: v
    integer :: ii, jj
    if (trans == 'N') then
      ii = i; jj = j
    else
      ii = j; jj = i
    end if
    if (ii == jj) then
      if (diag == 'U') then
        v = 1
      else
        v = a(ii, ii)
      end if
    else if (in_tri(uplo, ii, jj)) then
      v = a(ii, jj)
    else
      v = 0
    end if
  end function dtri

  ! ---------------------------------------------------------------- DTRSM
  subroutine test_dtrsm(side, uplo, trans, diag, m, n)
    character, intent(in) :: side, uplo, trans, diag
    integer, intent(in) :: m, n
    real(dp), parameter :: alpha = -1.5_dp
    real(dp), allocatable :: a(:, :), b(:, :), b0(:, :), a0(:, :)
    real(ep), allocatable :: x(:, :)
    integer :: na, lda, ldb, i, j, l, c
    logical :: lower, ok
    real(ep) :: s, maxd, maxn
    character(len=100) :: what

    if (side == 'L') then
      na = m
    else
      na = n
    end if
    lda = na + 2; ldb = m + 3
    allocate (a(lda, na), b(ldb, n), x(m, n))
    call fill_tri_d(a, na, uplo, diag)
    call fill_d(b)
    allocate (a0, source=a); allocate (b0, source=b)
    call dtrsm(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb)
    ! op(A) is lower triangular iff (uplo == L) == (trans == N)
    lower = (uplo == 'L') .eqv. (trans == 'N')
    if (side == 'L') then                ! op(A) X = alpha B
      do j = 1, n
        do c = 1, m
          if (lower) then
            i = c
          else
            i = m + 1 - c
          end if
          s = alpha * real(b0(i, j), ep)
          do l = 1, m
            if ((lower .and. l < i) .or. (.not. lower .and. l > i)) &
              s = s - dtri(a0, uplo, trans, diag, i, l) * x(l, j)
          end do
          x(i, j) = s / dtri(a0, uplo, trans, diag, i, i)
        end do
      end do
    else                                  ! X op(A) = alpha B
      do i = 1, m
        do c = 1, n
          if (lower) then
            j = n + 1 - c
          else
            j = c
          end if
          s = alpha * real(b0(i, j), ep)
          do l = 1, n
            if ((lower .and. l > j) .or. (.not. lower .and. l < j)) &
              s = s - x(i, l) * dtri(a0, uplo, trans, diag, l, j)
          end do
          x(i, j) = s / dtri(a0, uplo, trans, diag, j, j)
        end do
      end do
    end if
    maxd = maxval(abs(real(b(1:m, :), ep) - x))
    maxn = maxval(abs(x))
    ok = all(b(m + 1:, :) == b0(m + 1:, :)) .and. all(a == a0)
    write (what, '(4(a,a),2(a,i0),2(a,i0))') 'dtrsm side=', side, ' uplo=', uplo, &
      ' transa=', trans, ' diag=', diag, ' m=', m, ' n=', n, ' lda=', lda, ' ldb=', ldb
    call report(ok, what, ratio(maxd, maxn), tol_d)
  end subroutine test_dtrsm

  ! ---------------------------------------------------------------- ZTRMM
  function ztri(a, uplo, trans, diag, i, j) result(v)
    complex(dp), intent(in) :: a(:, :)
    character, intent(in) :: uplo, trans, diag
    integer, intent(in) :: i, j
    complex(ep) :: v
    integer :: ii, jj
    if (trans == 'N') then
      ii = i; jj = j
    else
      ii = j; jj = i
    end if
    if (ii == jj) then
      if (diag == 'U') then
        v = 1
      else
        v = a(ii, ii)
      end if
    else if (in_tri(uplo, ii, jj)) then
      v = a(ii, jj)
    else
      v = 0
    end if
    if (trans == 'C') v = conjg(v)
  end function ztri

  subroutine test_ztrmm(side, uplo, trans, diag, m, n)
    character, intent(in) :: side, uplo, trans, diag
    integer, intent(in) :: m, n
    complex(dp), parameter :: alpha = (0.5_dp, 1.25_dp)
    complex(dp), allocatable :: a(:, :), b(:, :), b0(:, :), a0(:, :)
    integer :: na, lda, ldb, i, j, l
    complex(ep) :: s, x, y, ref
    real(ep) :: sa, maxd, maxn
    logical :: ok
    character(len=100) :: what

    if (side == 'L') then
      na = m
    else
      na = n
    end if
    lda = na + 1; ldb = m + 2
    allocate (a(lda, na), b(ldb, n))
    call fill_z(a); call fill_z(b)
    do j = 1, na                          ! garbage outside the referenced part
      do i = 1, na
        if (.not. in_tri(uplo, i, j) .or. (i == j .and. diag == 'U')) &
          a(i, j) = a(i, j) + (400.0_dp, -300.0_dp)
      end do
    end do
    allocate (a0, source=a); allocate (b0, source=b)
    call ztrmm(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb)
    maxd = 0; maxn = 0
    do j = 1, n
      do i = 1, m
        s = 0; sa = 0
        do l = 1, na
          if (side == 'L') then
            x = ztri(a0, uplo, trans, diag, i, l); y = b0(l, j)
          else
            x = b0(i, l); y = ztri(a0, uplo, trans, diag, l, j)
          end if
          s = s + x * y
          sa = sa + abs1(x) * abs1(y)
        end do
        ref = alpha * s
        maxd = max(maxd, abs1(b(i, j) - ref))
        maxn = max(maxn, abs1(cmplx(alpha, kind=ep)) * sa)
      end do
    end do
    ok = all(b(m + 1:, :) == b0(m + 1:, :)) .and. all(a == a0)
    write (what, '(4(a,a),2(a,i0),2(a,i0))') 'ztrmm side=', side, ' uplo=', uplo, &
      ' transa=', trans, ' diag=', diag, ' m=', m, ' n=', n, ' lda=', lda, ' ldb=', ldb
    call report(ok, what, ratio(maxd, maxn), tol_d)
  end subroutine test_ztrmm

  ! ---------------------------------------------------------------- DSYMM
  subroutine test_dsymm(side, uplo, m, n)
    character, intent(in) :: side, uplo
    integer, intent(in) :: m, n
    real(dp), parameter :: alpha = -0.75_dp, beta = 2.0_dp
    real(dp), allocatable :: a(:, :), b(:, :), c(:, :), c0(:, :), a0(:, :), b0(:, :)
    integer :: na, lda, ldb, ldc, i, j, l
    real(ep) :: s, sa, x, y, maxd, maxn, ref
    logical :: ok
    character(len=100) :: what

    if (side == 'L') then
      na = m
    else
      na = n
    end if
    lda = na + 3; ldb = m + 1; ldc = m + 2
    allocate (a(lda, na), b(ldb, n), c(ldc, n))
    call fill_d(a); call fill_d(b); call fill_d(c)
    do j = 1, na
      do i = 1, na
        if (.not. in_tri(uplo, i, j)) a(i, j) = 600.0_dp + a(i, j)
      end do
    end do
    allocate (a0, source=a); allocate (b0, source=b); allocate (c0, source=c)
    call dsymm(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
    maxd = 0; maxn = 0
    do j = 1, n
      do i = 1, m
        s = 0; sa = 0
        do l = 1, na
          if (side == 'L') then
            if (in_tri(uplo, i, l)) then
              x = a0(i, l)
            else
              x = a0(l, i)
            end if
            y = b0(l, j)
          else
            x = b0(i, l)
            if (in_tri(uplo, l, j)) then
              y = a0(l, j)
            else
              y = a0(j, l)
            end if
          end if
          s = s + x * y
          sa = sa + abs(x) * abs(y)
        end do
        ref = alpha * s + beta * real(c0(i, j), ep)
        maxd = max(maxd, abs(real(c(i, j), ep) - ref))
        maxn = max(maxn, abs(alpha) * sa + abs(beta) * abs(real(c0(i, j), ep)))
      end do
    end do
    ok = all(c(m + 1:, :) == c0(m + 1:, :)) .and. all(a == a0) .and. all(b == b0)
    write (what, '(2(a,a),2(a,i0),3(a,i0))') 'dsymm side=', side, ' uplo=', uplo, &
      ' m=', m, ' n=', n, ' lda=', lda, ' ldb=', ldb, ' ldc=', ldc
    call report(ok, what, ratio(maxd, maxn), tol_d)
  end subroutine test_dsymm

  ! ---------------------------------------------------------------- ZHER2K
  subroutine test_zher2k(uplo, trans, n, k)
    character, intent(in) :: uplo, trans
    integer, intent(in) :: n, k
    complex(dp), parameter :: alpha = (-1.5_dp, 0.25_dp)
    real(dp), parameter :: beta = 0.5_dp
    complex(dp), allocatable :: a(:, :), b(:, :), c(:, :), c0(:, :), a0(:, :), b0(:, :)
    integer :: lda, ldb, ldc, i, j, l
    complex(ep) :: s1, s2, ai, aj, bi, bj, ref, al
    real(ep) :: sa, maxd, maxn
    logical :: ok
    character(len=100) :: what

    if (trans == 'N') then
      lda = n + 2; ldb = n + 1
      allocate (a(lda, k), b(ldb, k))
    else
      lda = k + 1; ldb = k + 3
      allocate (a(lda, n), b(ldb, n))
    end if
    ldc = n + 2
    allocate (c(ldc, n))
    call fill_z(a); call fill_z(b); call fill_z(c)
    allocate (a0, source=a); allocate (b0, source=b); allocate (c0, source=c)
    call zher2k(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    al = alpha
    maxd = 0; maxn = 0; ok = .true.
    do j = 1, n
      do i = 1, n
        if (.not. in_tri(uplo, i, j)) then
          if (c(i, j) /= c0(i, j)) ok = .false.
          cycle
        end if
        ! X = op(A), Y = op(B) (n x k): alpha X Y^H + conj(alpha) Y X^H
        s1 = 0; s2 = 0; sa = 0
        do l = 1, k
          if (trans == 'N') then
            ai = a0(i, l); aj = a0(j, l); bi = b0(i, l); bj = b0(j, l)
          else
            ai = conjg(cmplx(a0(l, i), kind=ep)); aj = conjg(cmplx(a0(l, j), kind=ep))
            bi = conjg(cmplx(b0(l, i), kind=ep)); bj = conjg(cmplx(b0(l, j), kind=ep))
          end if
          s1 = s1 + ai * conjg(bj)
          s2 = s2 + bi * conjg(aj)
          sa = sa + abs1(ai) * abs1(bj) + abs1(bi) * abs1(aj)
        end do
        ref = al * s1 + conjg(al) * s2
        if (i == j) then
          ref = cmplx(real(ref, ep) + beta * real(c0(i, i), ep), 0, ep)
          if (aimag(c(i, i)) /= 0) ok = .false.
          maxn = max(maxn, abs1(al) * sa + abs(beta) * abs(real(c0(i, i), ep)))
        else
          ref = ref + beta * c0(i, j)
          maxn = max(maxn, abs1(al) * sa + abs(beta) * abs1(cmplx(c0(i, j), kind=ep)))
        end if
        maxd = max(maxd, abs1(c(i, j) - ref))
      end do
    end do
    ok = ok .and. all(c(n + 1:, :) == c0(n + 1:, :)) .and. all(a == a0) .and. all(b == b0)
    write (what, '(2(a,a),2(a,i0),3(a,i0))') 'zher2k uplo=', uplo, ' trans=', trans, &
      ' n=', n, ' k=', k, ' lda=', lda, ' ldb=', ldb, ' ldc=', ldc
    call report(ok, what, ratio(maxd, maxn), tol_d)
  end subroutine test_zher2k

end program level3_check_f

/* fftw_check's per-precision tests, included once per precision by fftw_check.c with
   R (real type), X(name) (API prefix), T(name) (local suffix), PREC, EPS and FORT(name) defined. */

/* An array as the checker reads it: complex interleaved (scale 2, im = re + 1), split (scale 1)
   or real (im NULL). */
typedef struct {
  R* re;
  R* im;
  int scale;
} T(Arr);
static T(Arr) T(cplx)(void* p) {
  T(Arr) a = {(R*)p, (R*)p + 1, 2};
  return a;
}
static T(Arr) T(splt)(R* re, R* im) {
  T(Arr) a = {re, im, 1};
  return a;
}
static T(Arr) T(real)(void* p) {
  T(Arr) a = {(R*)p, NULL, 1};
  return a;
}

/* Zeroed FFTW-aligned memory of n reals. */
static R* T(alloc)(long n) {
  R* p = X(alloc_real)((size_t)n);
  memset(p, 0, sizeof(R) * (size_t)n);
  return p;
}

/* What the input was (c2c, r2c, r2r: the logical input; c2r: the real signal whose spectrum the
   input is), one dense block per batch. */
typedef struct {
  long H, N;
  long double *re, *im;
} T(Ref);

static long T(batches)(const Layout* L) { return product(L->hrank, L->hn); }

static void T(fill)(int kind, const Layout* L, T(Arr) in, T(Ref)* ref) {
  long H = T(batches)(L), N = product(L->rank, L->n), hd[MAXR];
  half_dims(L, hd);
  ref->H = H, ref->N = N;
  ref->re = calloc((size_t)(H * N), sizeof(long double));
  ref->im = calloc((size_t)(H * N), sizeof(long double));
  for (long b = 0; b < H; ++b) {
    long double *xr = ref->re + b * N, *xi = ref->im + b * N;
    if (kind == C2R) {
      long double* sr = calloc((size_t)N, sizeof(long double));
      long double* si = calloc((size_t)N, sizeof(long double));
      for (long e = 0; e < N; ++e) sr[e] = xr[e] = rnd();
      dft(L->rank, L->n, sr, si, FFTW_FORWARD);
      long Nh = product(L->rank, hd);
      for (long e = 0; e < Nh; ++e) {
        /* the same multi-index in the full array */
        long full = 0, rest = e, mul = 1;
        for (int d = L->rank - 1; d >= 0; --d) {
          full += (rest % hd[d]) * mul;
          rest /= hd[d], mul *= L->n[d];
        }
        long o = offset(L, b, e, 0, hd);
        in.re[in.scale * o] = (R)sr[full];
        in.im[in.scale * o] = (R)si[full];
      }
      free(sr), free(si);
      continue;
    }
    for (long e = 0; e < N; ++e) {
      long o = offset(L, b, e, 0, L->n);
      xr[e] = rnd();
      in.re[in.scale * o] = (R)xr[e];
      if (kind == C2C) {
        xi[e] = rnd();
        in.im[in.scale * o] = (R)xi[e];
      }
      /* the program's data is what the reference must use: round as the array did */
      xr[e] = in.re[in.scale * o];
      if (kind == C2C) xi[e] = in.im[in.scale * o];
    }
  }
}

/* Compares the output with the reference; frees the reference. */
static void T(verify)(const char* what, int kind, int sign, const int* kinds, const Layout* L, T(Arr) out,
                      T(Ref)* ref) {
  long H = ref->H, N = ref->N, hd[MAXR];
  half_dims(L, hd);
  long double* wr = calloc((size_t)N, sizeof(long double));
  long double* wi = calloc((size_t)N, sizeof(long double));
  double err = 0, big = 0;
  for (long b = 0; b < H; ++b) {
    memcpy(wr, ref->re + b * N, sizeof(long double) * (size_t)N);
    memcpy(wi, ref->im + b * N, sizeof(long double) * (size_t)N);
    if (kind == C2C || kind == R2C) dft(L->rank, L->n, wr, wi, kind == R2C ? FFTW_FORWARD : sign);
    if (kind == R2R) r2r(L->rank, L->n, kinds, wr);
    if (kind == C2R)
      for (long e = 0; e < N; ++e) wr[e] *= (long double)N;
    const long* od = kind == R2C ? hd : L->n;
    long No = product(L->rank, od);
    for (long e = 0; e < No; ++e) {
      long full = e;
      if (kind == R2C) {
        long rest = e, mul = 1;
        full = 0;
        for (int d = L->rank - 1; d >= 0; --d) {
          full += (rest % hd[d]) * mul;
          rest /= hd[d], mul *= L->n[d];
        }
      }
      long o = offset(L, b, e, 1, od);
      double dr = fabs((double)(out.re[out.scale * o] - wr[full]));
      double di = out.im ? fabs((double)(out.im[out.scale * o] - wi[full])) : 0;
      if (dr > err) err = dr;
      if (di > err) err = di;
      if (fabsl(wr[full]) > big) big = (double)fabsl(wr[full]);
      if (out.im && fabsl(wi[full]) > big) big = (double)fabsl(wi[full]);
    }
  }
  double rel = err / (big > 0 ? big : 1), tol = 30 * EPS * log_factor(L) * (kind == R2R ? 4 : 1);
  report(rel <= tol, PREC, what, rel, tol);
  free(wr), free(wi), free(ref->re), free(ref->im);
}

/* Span (in reals) of an array read through the layout. */
static long T(span)(const Layout* L, int out, const long* dims, int scale) {
  long s = 1;
  for (int i = 0; i < L->rank; ++i) s += (dims[i] - 1) * (out ? L->os[i] : L->is[i]);
  for (int i = 0; i < L->hrank; ++i) s += (L->hn[i] - 1) * (out ? L->hos[i] : L->his[i]);
  return s * scale + 2;
}

static void T(guru_dims)(const Layout* L, X(iodim)* d, X(iodim)* h) {
  for (int i = 0; i < L->rank; ++i) d[i].n = (int)L->n[i], d[i].is = (int)L->is[i], d[i].os = (int)L->os[i];
  for (int i = 0; i < L->hrank; ++i) h[i].n = (int)L->hn[i], h[i].is = (int)L->his[i], h[i].os = (int)L->hos[i];
}
static void T(guru64_dims)(const Layout* L, X(iodim64)* d, X(iodim64)* h) {
  for (int i = 0; i < L->rank; ++i) d[i].n = L->n[i], d[i].is = L->is[i], d[i].os = L->os[i];
  for (int i = 0; i < L->hrank; ++i) h[i].n = L->hn[i], h[i].is = L->his[i], h[i].os = L->hos[i];
}

static Layout T(simple)(int rank, const int* n) { return rowmajor(rank, n, NULL, NULL, 1, 1, 1, 0, 0); }

/* ---- complex DFTs ---- */
static void T(test_c2c)(void) {
  char what[128];
  static const int sizes[] = {1, 8, 17, 64, 101, 105};
  for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; ++i)
    for (int sign = -1; sign <= 1; sign += 2) {
      int n = sizes[i];
      Layout L = T(simple)(1, &n);
      R *in = T(alloc)(2 * n), *out = T(alloc)(2 * n);
      X(plan) p = X(plan_dft_1d)(n, (X(complex)*)in, (X(complex)*)out, sign, FFTW_ESTIMATE);
      T(Ref) ref;
      T(fill)(C2C, &L, T(cplx)(in), &ref);
      X(execute)(p);
      snprintf(what, sizeof what, "plan_dft_1d n=%d sign=%d", n, sign);
      T(verify)(what, C2C, sign, NULL, &L, T(cplx)(out), &ref);
      X(destroy_plan)(p);
      /* in place, planned with MEASURE (which may clobber: fill after planning) */
      p = X(plan_dft_1d)(n, (X(complex)*)in, (X(complex)*)in, sign, FFTW_MEASURE);
      T(fill)(C2C, &L, T(cplx)(in), &ref);
      X(execute)(p);
      snprintf(what, sizeof what, "plan_dft_1d in-place MEASURE n=%d sign=%d", n, sign);
      T(verify)(what, C2C, sign, NULL, &L, T(cplx)(in), &ref);
      X(destroy_plan)(p);
      X(free)(in), X(free)(out);
    }
  {
    int n[] = {12, 17};
    Layout L = T(simple)(2, n);
    R *in = T(alloc)(2 * 12 * 17), *out = T(alloc)(2 * 12 * 17);
    X(plan) p = X(plan_dft_2d)(12, 17, (X(complex)*)in, (X(complex)*)out, FFTW_FORWARD, FFTW_ESTIMATE);
    T(Ref) ref;
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("plan_dft_2d 12x17", C2C, -1, NULL, &L, T(cplx)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
  }
  {
    int n[] = {4, 6, 5};
    Layout L = T(simple)(3, n);
    R* in = T(alloc)(2 * 120);
    X(plan) p = X(plan_dft_3d)(4, 6, 5, (X(complex)*)in, (X(complex)*)in, FFTW_BACKWARD, FFTW_MEASURE);
    T(Ref) ref;
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("plan_dft_3d 4x6x5 in-place", C2C, 1, NULL, &L, T(cplx)(in), &ref);
    X(destroy_plan)(p);
    int m[] = {3, 4, 5};
    L = T(simple)(3, m);
    R* out = T(alloc)(2 * 60);
    p = X(plan_dft)(3, m, (X(complex)*)in, (X(complex)*)out, FFTW_BACKWARD, FFTW_ESTIMATE);
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("plan_dft rank 3", C2C, 1, NULL, &L, T(cplx)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
  }
  {
    /* plan_many_dft: embedded, strided, batched input; dense output */
    int n[] = {6, 5}, inembed[] = {8, 7};
    int istride = 2, idist = 8 * 7 * 2 + 3, odist = 30;
    Layout L = rowmajor(2, n, inembed, NULL, istride, 1, 3, idist, odist);
    R *in = T(alloc)(T(span)(&L, 0, L.n, 2)), *out = T(alloc)(T(span)(&L, 1, L.n, 2));
    X(plan) p = X(plan_many_dft)(2, n, 3, (X(complex)*)in, inembed, istride, idist, (X(complex)*)out, NULL, 1,
                                 odist, FFTW_FORWARD, FFTW_ESTIMATE);
    T(Ref) ref;
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("plan_many_dft embedded strided batched", C2C, -1, NULL, &L, T(cplx)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
    /* in place, batched, contiguous */
    int m = 16;
    L = rowmajor(1, &m, NULL, NULL, 1, 1, 4, 16, 16);
    in = T(alloc)(2 * 64);
    p = X(plan_many_dft)(1, &m, 4, (X(complex)*)in, NULL, 1, 16, (X(complex)*)in, NULL, 1, 16, FFTW_BACKWARD,
                         FFTW_ESTIMATE);
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("plan_many_dft in-place batched", C2C, 1, NULL, &L, T(cplx)(in), &ref);
    X(destroy_plan)(p);
    X(free)(in);
  }
  {
    /* guru: transposed output, two batches */
    Layout L;
    memset(&L, 0, sizeof L);
    L.rank = 2, L.n[0] = 6, L.n[1] = 5, L.is[0] = 5, L.is[1] = 1, L.os[0] = 1, L.os[1] = 6;
    L.hrank = 1, L.hn[0] = 2, L.his[0] = 30, L.hos[0] = 30;
    X(iodim) d[2], h[1];
    T(guru_dims)(&L, d, h);
    R *in = T(alloc)(2 * 60), *out = T(alloc)(2 * 60);
    X(plan) p = X(plan_guru_dft)(2, d, 1, h, (X(complex)*)in, (X(complex)*)out, FFTW_FORWARD, FFTW_ESTIMATE);
    T(Ref) ref;
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("plan_guru_dft transposed output", C2C, -1, NULL, &L, T(cplx)(out), &ref);
    X(destroy_plan)(p);
    /* guru64: rank 4 */
    memset(&L, 0, sizeof L);
    L.rank = 4;
    long n4[] = {2, 3, 2, 5}, s4[] = {30, 10, 5, 1};
    for (int i = 0; i < 4; ++i) L.n[i] = n4[i], L.is[i] = s4[i], L.os[i] = s4[i];
    L.hrank = 1, L.hn[0] = 1, L.his[0] = 0, L.hos[0] = 0;
    X(iodim64) d4[4], h4[1];
    T(guru64_dims)(&L, d4, h4);
    p = X(plan_guru64_dft)(4, d4, 1, h4, (X(complex)*)in, (X(complex)*)out, FFTW_BACKWARD, FFTW_ESTIMATE);
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("plan_guru64_dft rank 4", C2C, 1, NULL, &L, T(cplx)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
  }
  {
    /* split arrays */
    int n = 16;
    Layout L = rowmajor(1, &n, NULL, NULL, 1, 1, 3, 16, 16);
    X(iodim) d[1], h[1];
    T(guru_dims)(&L, d, h);
    R *ri = T(alloc)(48), *ii = T(alloc)(48), *ro = T(alloc)(48), *io = T(alloc)(48);
    X(plan) p = X(plan_guru_split_dft)(1, d, 1, h, ri, ii, ro, io, FFTW_ESTIMATE);
    T(Ref) ref;
    T(fill)(C2C, &L, T(splt)(ri, ii), &ref);
    X(execute)(p);
    T(verify)("plan_guru_split_dft", C2C, -1, NULL, &L, T(splt)(ro, io), &ref);
    X(destroy_plan)(p);
    int m[] = {4, 6};
    L = T(simple)(2, m);
    X(iodim64) d2[2], h2[1];
    T(guru64_dims)(&L, d2, h2);
    /* backward by swapping the parts, in place */
    p = X(plan_guru64_split_dft)(2, d2, 1, h2, ii, ri, ii, ri, FFTW_MEASURE);
    T(fill)(C2C, &L, T(splt)(ri, ii), &ref);
    X(execute)(p);
    T(verify)("plan_guru64_split_dft in-place backward", C2C, 1, NULL, &L, T(splt)(ri, ii), &ref);
    X(destroy_plan)(p);
    X(free)(ri), X(free)(ii), X(free)(ro), X(free)(io);
  }
}

/* ---- real-to-complex and complex-to-real ---- */
static void T(test_rdft2)(int kind) {
  char what[128];
  const char* k = kind == R2C ? "r2c" : "c2r";
  T(Ref) ref;
  /* 1-D, out of place, two sizes */
  static const int sizes[] = {17, 64};
  for (unsigned i = 0; i < 2; ++i) {
    int n = sizes[i];
    Layout L = T(simple)(1, &n);
    R *r = T(alloc)(n + 2), *c = T(alloc)(2 * (n / 2 + 1));
    unsigned flags = i == 0 ? FFTW_ESTIMATE : FFTW_MEASURE;
    X(plan) p = kind == R2C ? X(plan_dft_r2c_1d)(n, r, (X(complex)*)c, flags)
                            : X(plan_dft_c2r_1d)(n, (X(complex)*)c, r, flags | FFTW_PRESERVE_INPUT);
    T(fill)(kind, &L, kind == R2C ? T(real)(r) : T(cplx)(c), &ref);
    R* saved = T(alloc)(2 * (n / 2 + 1));
    memcpy(saved, c, sizeof(R) * 2 * (size_t)(n / 2 + 1));
    X(execute)(p);
    snprintf(what, sizeof what, "plan_dft_%s_1d n=%d", k, n);
    T(verify)(what, kind, 0, NULL, &L, kind == R2C ? T(cplx)(c) : T(real)(r), &ref);
    if (kind == C2R)
      expect(memcmp(saved, c, sizeof(R) * 2 * (size_t)(n / 2 + 1)) == 0, PREC,
             "plan_dft_c2r_1d PRESERVE_INPUT keeps the input");
    X(free)(saved);
    X(destroy_plan)(p);
    X(free)(r), X(free)(c);
  }
  /* 2-D and 3-D, out of place */
  {
    int n2[] = {8, 10}, n3[] = {4, 4, 6};
    for (int rank = 2; rank <= 3; ++rank) {
      const int* n = rank == 2 ? n2 : n3;
      Layout L = T(simple)(rank, n);
      long h[MAXR];
      half_dims(&L, h);
      L = rowmajor(rank, n, kind == R2C ? NULL : NULL, NULL, 1, 1, 1, 0, 0);
      /* the complex side is dense over the half dims */
      int hn[MAXR];
      for (int d = 0; d < rank; ++d) hn[d] = (int)h[d];
      L = kind == R2C ? rowmajor(rank, n, NULL, hn, 1, 1, 1, 0, 0) : rowmajor(rank, n, hn, NULL, 1, 1, 1, 0, 0);
      long N = product(rank, L.n), Nh = product(rank, h);
      R *r = T(alloc)(N), *c = T(alloc)(2 * Nh);
      X(plan) p;
      if (rank == 2)
        p = kind == R2C ? X(plan_dft_r2c_2d)(n[0], n[1], r, (X(complex)*)c, FFTW_ESTIMATE)
                        : X(plan_dft_c2r_2d)(n[0], n[1], (X(complex)*)c, r, FFTW_ESTIMATE);
      else
        p = kind == R2C ? X(plan_dft_r2c_3d)(n[0], n[1], n[2], r, (X(complex)*)c, FFTW_ESTIMATE)
                        : X(plan_dft_c2r_3d)(n[0], n[1], n[2], (X(complex)*)c, r, FFTW_ESTIMATE);
      T(fill)(kind, &L, kind == R2C ? T(real)(r) : T(cplx)(c), &ref);
      X(execute)(p);
      snprintf(what, sizeof what, "plan_dft_%s_%dd", k, rank);
      T(verify)(what, kind, 0, NULL, &L, kind == R2C ? T(cplx)(c) : T(real)(r), &ref);
      X(destroy_plan)(p);
      X(free)(r), X(free)(c);
    }
  }
  /* rank 2, in place (padded real rows) */
  {
    int n[] = {6, 9}, pad[] = {6, 10}, half[] = {6, 5};
    Layout L = kind == R2C ? rowmajor(2, n, pad, half, 1, 1, 1, 0, 0) : rowmajor(2, n, half, pad, 1, 1, 1, 0, 0);
    R* a = T(alloc)(60);
    X(plan) p = kind == R2C ? X(plan_dft_r2c)(2, n, a, (X(complex)*)a, FFTW_MEASURE)
                            : X(plan_dft_c2r)(2, n, (X(complex)*)a, a, FFTW_MEASURE);
    T(fill)(kind, &L, kind == R2C ? T(real)(a) : T(cplx)(a), &ref);
    X(execute)(p);
    snprintf(what, sizeof what, "plan_dft_%s rank 2 in-place", k);
    T(verify)(what, kind, 0, NULL, &L, kind == R2C ? T(cplx)(a) : T(real)(a), &ref);
    X(destroy_plan)(p);
    X(free)(a);
  }
  /* plan_many: batched with gaps */
  {
    int n = 12;
    Layout L = kind == R2C ? rowmajor(1, &n, NULL, NULL, 1, 1, 3, 14, 8) : rowmajor(1, &n, NULL, NULL, 1, 1, 3, 8, 14);
    R *r = T(alloc)(3 * 14 + 2), *c = T(alloc)(2 * 3 * 8 + 2);
    X(plan) p = kind == R2C ? X(plan_many_dft_r2c)(1, &n, 3, r, NULL, 1, 14, (X(complex)*)c, NULL, 1, 8, FFTW_ESTIMATE)
                            : X(plan_many_dft_c2r)(1, &n, 3, (X(complex)*)c, NULL, 1, 8, r, NULL, 1, 14, FFTW_ESTIMATE);
    T(fill)(kind, &L, kind == R2C ? T(real)(r) : T(cplx)(c), &ref);
    X(execute)(p);
    snprintf(what, sizeof what, "plan_many_dft_%s batched", k);
    T(verify)(what, kind, 0, NULL, &L, kind == R2C ? T(cplx)(c) : T(real)(r), &ref);
    X(destroy_plan)(p);
    X(free)(r), X(free)(c);
  }
  /* guru and guru64, interleaved and split */
  for (int variant = 0; variant < 4; ++variant) {
    int guru64 = variant & 1, split = variant >> 1;
    int n[] = {5, 6};
    Layout L = kind == R2C ? rowmajor(2, n, NULL, (int[]){5, 4}, 1, 1, 2, 30, 20)
                           : rowmajor(2, n, (int[]){5, 4}, NULL, 1, 1, 2, 20, 30);
    X(iodim) d[2], h[1];
    X(iodim64) d64[2], h64[1];
    T(guru_dims)(&L, d, h);
    T(guru64_dims)(&L, d64, h64);
    R *r = T(alloc)(64), *c = T(alloc)(2 * 44), *cr = T(alloc)(44), *ci = T(alloc)(44);
    X(plan) p;
    if (kind == R2C && !split)
      p = guru64 ? X(plan_guru64_dft_r2c)(2, d64, 1, h64, r, (X(complex)*)c, FFTW_ESTIMATE)
                 : X(plan_guru_dft_r2c)(2, d, 1, h, r, (X(complex)*)c, FFTW_ESTIMATE);
    else if (kind == R2C)
      p = guru64 ? X(plan_guru64_split_dft_r2c)(2, d64, 1, h64, r, cr, ci, FFTW_ESTIMATE)
                 : X(plan_guru_split_dft_r2c)(2, d, 1, h, r, cr, ci, FFTW_ESTIMATE);
    else if (!split)
      p = guru64 ? X(plan_guru64_dft_c2r)(2, d64, 1, h64, (X(complex)*)c, r, FFTW_ESTIMATE)
                 : X(plan_guru_dft_c2r)(2, d, 1, h, (X(complex)*)c, r, FFTW_ESTIMATE);
    else
      p = guru64 ? X(plan_guru64_split_dft_c2r)(2, d64, 1, h64, cr, ci, r, FFTW_ESTIMATE)
                 : X(plan_guru_split_dft_c2r)(2, d, 1, h, cr, ci, r, FFTW_ESTIMATE);
    T(Arr) cx = split ? T(splt)(cr, ci) : T(cplx)(c);
    T(fill)(kind, &L, kind == R2C ? T(real)(r) : cx, &ref);
    X(execute)(p);
    snprintf(what, sizeof what, "plan_guru%s%s_dft_%s", guru64 ? "64" : "", split ? "_split" : "", k);
    T(verify)(what, kind, 0, NULL, &L, kind == R2C ? cx : T(real)(r), &ref);
    X(destroy_plan)(p);
    X(free)(r), X(free)(c), X(free)(cr), X(free)(ci);
  }
}

/* ---- real-to-real ---- */
static void T(test_r2r)(void) {
  char what[128];
  static const int kinds[] = {FFTW_R2HC,    FFTW_HC2R,    FFTW_DHT,     FFTW_REDFT00, FFTW_REDFT10, FFTW_REDFT01,
                              FFTW_REDFT11, FFTW_RODFT00, FFTW_RODFT10, FFTW_RODFT01, FFTW_RODFT11};
  T(Ref) ref;
  for (unsigned i = 0; i < sizeof kinds / sizeof *kinds; ++i) {
    int n = 9;
    Layout L = T(simple)(1, &n);
    R *in = T(alloc)(n), *out = T(alloc)(n);
    X(plan) p = X(plan_r2r_1d)(n, in, out, (X(r2r_kind))kinds[i], FFTW_ESTIMATE);
    T(fill)(R2R, &L, T(real)(in), &ref);
    X(execute)(p);
    snprintf(what, sizeof what, "plan_r2r_1d kind=%d", kinds[i]);
    T(verify)(what, R2R, 0, &kinds[i], &L, T(real)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
  }
  {
    int n[] = {6, 7}, k[] = {FFTW_REDFT10, FFTW_RODFT11};
    Layout L = T(simple)(2, n);
    R *in = T(alloc)(42), *out = T(alloc)(42);
    X(plan) p = X(plan_r2r_2d)(6, 7, in, out, FFTW_REDFT10, FFTW_RODFT11, FFTW_ESTIMATE);
    T(fill)(R2R, &L, T(real)(in), &ref);
    X(execute)(p);
    T(verify)("plan_r2r_2d", R2R, 0, k, &L, T(real)(out), &ref);
    X(destroy_plan)(p);
    int n3[] = {3, 4, 5}, k3[] = {FFTW_DHT, FFTW_REDFT01, FFTW_R2HC};
    L = T(simple)(3, n3);
    R *a = T(alloc)(60), *b = T(alloc)(60);
    p = X(plan_r2r_3d)(3, 4, 5, a, b, FFTW_DHT, FFTW_REDFT01, FFTW_R2HC, FFTW_ESTIMATE);
    T(fill)(R2R, &L, T(real)(a), &ref);
    X(execute)(p);
    T(verify)("plan_r2r_3d", R2R, 0, k3, &L, T(real)(b), &ref);
    X(destroy_plan)(p);
    int m = 16;
    X(r2r_kind) km = FFTW_REDFT10;
    int kmi = FFTW_REDFT10;
    L = T(simple)(1, &m);
    p = X(plan_r2r)(1, &m, a, a, &km, FFTW_MEASURE);
    T(fill)(R2R, &L, T(real)(a), &ref);
    X(execute)(p);
    T(verify)("plan_r2r in-place", R2R, 0, &kmi, &L, T(real)(a), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out), X(free)(a), X(free)(b);
  }
  {
    int n = 10, k = FFTW_RODFT10;
    X(r2r_kind) kk = FFTW_RODFT10;
    Layout L = rowmajor(1, &n, NULL, NULL, 2, 1, 3, 21, 10);
    R *in = T(alloc)(70), *out = T(alloc)(70);
    X(plan) p = X(plan_many_r2r)(1, &n, 3, in, NULL, 2, 21, out, NULL, 1, 10, &kk, FFTW_ESTIMATE);
    T(fill)(R2R, &L, T(real)(in), &ref);
    X(execute)(p);
    T(verify)("plan_many_r2r strided batched", R2R, 0, &k, &L, T(real)(out), &ref);
    X(destroy_plan)(p);
    int n2[] = {4, 5}, k2[] = {FFTW_REDFT11, FFTW_DHT};
    X(r2r_kind) kk2[] = {FFTW_REDFT11, FFTW_DHT};
    L = rowmajor(2, n2, NULL, NULL, 1, 1, 2, 20, 20);
    X(iodim) d[2], h[1];
    X(iodim64) d64[2], h64[1];
    T(guru_dims)(&L, d, h);
    T(guru64_dims)(&L, d64, h64);
    p = X(plan_guru_r2r)(2, d, 1, h, in, out, kk2, FFTW_ESTIMATE);
    T(fill)(R2R, &L, T(real)(in), &ref);
    X(execute)(p);
    T(verify)("plan_guru_r2r", R2R, 0, k2, &L, T(real)(out), &ref);
    X(destroy_plan)(p);
    p = X(plan_guru64_r2r)(2, d64, 1, h64, in, out, kk2, FFTW_ESTIMATE);
    T(fill)(R2R, &L, T(real)(in), &ref);
    X(execute)(p);
    T(verify)("plan_guru64_r2r", R2R, 0, k2, &L, T(real)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
  }
}

/* ---- new-array execute: plans made on scratch arrays that are freed before execution ---- */
static void T(test_new_array)(void) {
  T(Ref) ref;
  int n = 32;
  Layout L = T(simple)(1, &n);
  for (int variant = 0; variant < 7; ++variant) {
    R *s1 = T(alloc)(2 * n + 2), *s2 = T(alloc)(2 * n + 2), *s3 = T(alloc)(2 * n + 2), *s4 = T(alloc)(2 * n + 2);
    X(plan) p = NULL;
    unsigned flags = variant == 0 ? FFTW_MEASURE : FFTW_ESTIMATE;  /* MEASURE: GROMACS' way */
    X(iodim) d = {n, 1, 1};
    X(r2r_kind) kind = FFTW_REDFT10;
    int kindi = FFTW_REDFT10;
    switch (variant) {
      case 0: p = X(plan_dft_1d)(n, (X(complex)*)s1, (X(complex)*)s2, FFTW_FORWARD, flags); break;
      case 1: p = X(plan_guru_split_dft)(1, &d, 0, NULL, s1, s2, s3, s4, flags); break;
      case 2: p = X(plan_dft_r2c_1d)(n, s1, (X(complex)*)s2, flags); break;
      case 3: p = X(plan_guru_split_dft_r2c)(1, &d, 0, NULL, s1, s2, s3, flags); break;
      case 4: p = X(plan_dft_c2r_1d)(n, (X(complex)*)s1, s2, flags); break;
      case 5: p = X(plan_guru_split_dft_c2r)(1, &d, 0, NULL, s1, s2, s3, flags); break;
      case 6: p = X(plan_r2r_1d)(n, s1, s2, kind, flags); break;
    }
    X(free)(s1), X(free)(s2), X(free)(s3), X(free)(s4);
    for (int round = 0; round < 2; ++round) {
      R *a = T(alloc)(2 * n + 2), *b = T(alloc)(2 * n + 2), *c = T(alloc)(2 * n + 2), *e = T(alloc)(2 * n + 2);
      const char* what = "";
      switch (variant) {
        case 0:
          T(fill)(C2C, &L, T(cplx)(a), &ref);
          X(execute_dft)(p, (X(complex)*)a, (X(complex)*)b);
          what = "execute_dft on new arrays (MEASURE plan)";
          T(verify)(what, C2C, -1, NULL, &L, T(cplx)(b), &ref);
          break;
        case 1:
          T(fill)(C2C, &L, T(splt)(a, b), &ref);
          X(execute_split_dft)(p, a, b, c, e);
          T(verify)("execute_split_dft on new arrays", C2C, -1, NULL, &L, T(splt)(c, e), &ref);
          break;
        case 2:
          T(fill)(R2C, &L, T(real)(a), &ref);
          X(execute_dft_r2c)(p, a, (X(complex)*)b);
          T(verify)("execute_dft_r2c on new arrays", R2C, 0, NULL, &L, T(cplx)(b), &ref);
          break;
        case 3:
          T(fill)(R2C, &L, T(real)(a), &ref);
          X(execute_split_dft_r2c)(p, a, b, c);
          T(verify)("execute_split_dft_r2c on new arrays", R2C, 0, NULL, &L, T(splt)(b, c), &ref);
          break;
        case 4:
          T(fill)(C2R, &L, T(cplx)(a), &ref);
          X(execute_dft_c2r)(p, (X(complex)*)a, b);
          T(verify)("execute_dft_c2r on new arrays", C2R, 0, NULL, &L, T(real)(b), &ref);
          break;
        case 5:
          T(fill)(C2R, &L, T(splt)(a, b), &ref);
          X(execute_split_dft_c2r)(p, a, b, c);
          T(verify)("execute_split_dft_c2r on new arrays", C2R, 0, NULL, &L, T(real)(c), &ref);
          break;
        case 6:
          T(fill)(R2R, &L, T(real)(a), &ref);
          X(execute_r2r)(p, a, b);
          T(verify)("execute_r2r on new arrays", R2R, 0, &kindi, &L, T(real)(b), &ref);
          break;
      }
      X(free)(a), X(free)(b), X(free)(c), X(free)(e);
    }
    X(destroy_plan)(p);
  }
}

/* ---- one plan, 8 threads at once ---- */
typedef struct {
  X(plan) plan;
  double err;
  uint64_t seed;
} T(Job);

static void* T(worker)(void* arg) {
  T(Job)* job = arg;
  const int n0 = 16, n1 = 12, N = n0 * n1;
  R *in = X(alloc_complex)(N)[0], *out = X(alloc_complex)(N)[0];
  long double *xr = malloc(sizeof(long double) * N), *xi = malloc(sizeof(long double) * N);
  long dims[] = {n0, n1};
  job->err = 0;
  for (int round = 0; round < 5; ++round) {
    for (int e = 0; e < N; ++e) {
      job->seed = job->seed * 6364136223846793005ull + 1442695040888963407ull;
      in[2 * e] = (R)((double)(job->seed >> 40) / (double)(1 << 24) - 0.5);
      in[2 * e + 1] = (R)((double)((job->seed >> 16) & 0xffffff) / (double)(1 << 24) - 0.5);
      xr[e] = in[2 * e], xi[e] = in[2 * e + 1];
    }
    X(execute_dft)(job->plan, (X(complex)*)in, (X(complex)*)out);
    dft(2, dims, xr, xi, FFTW_FORWARD);
    double big = 0, err = 0;
    for (int e = 0; e < N; ++e) {
      double dr = fabs((double)(out[2 * e] - xr[e])), di = fabs((double)(out[2 * e + 1] - xi[e]));
      if (dr > err) err = dr;
      if (di > err) err = di;
      if (fabsl(xr[e]) > big) big = (double)fabsl(xr[e]);
    }
    if (err / big > job->err) job->err = err / big;
  }
  X(free)(in), X(free)(out);
  free(xr), free(xi);
  return NULL;
}

static void T(test_threads)(void) {
  R* s = T(alloc)(2 * 192);
  X(plan) p = X(plan_dft_2d)(16, 12, (X(complex)*)s, (X(complex)*)(s + 0), FFTW_FORWARD, FFTW_ESTIMATE);
  X(destroy_plan)(p);  /* (a plan destroyed before any other is made) */
  R* o = T(alloc)(2 * 192);
  p = X(plan_dft_2d)(16, 12, (X(complex)*)s, (X(complex)*)o, FFTW_FORWARD, FFTW_ESTIMATE);
  pthread_t th[8];
  T(Job) jobs[8];
  for (int i = 0; i < 8; ++i) {
    jobs[i].plan = p, jobs[i].seed = 1234567u + 7919u * (unsigned)i;
    pthread_create(&th[i], NULL, T(worker), &jobs[i]);
  }
  double worst = 0;
  for (int i = 0; i < 8; ++i) {
    pthread_join(th[i], NULL);
    if (jobs[i].err > worst) worst = jobs[i].err;
  }
  double tol = 30 * EPS * (log2(193.0) + 1);
  report(worst <= tol, PREC, "one plan executed by 8 threads at once on different arrays", worst, tol);
  X(destroy_plan)(p);
  X(free)(s), X(free)(o);

  /* the threads API: the planner's own threads */
  expect(X(init_threads)() != 0, PREC, "init_threads");
  X(make_planner_thread_safe)();
  X(plan_with_nthreads)(2);
  expect(X(planner_nthreads)() == 2, PREC, "planner_nthreads after plan_with_nthreads(2)");
  int n[] = {32, 24};
  Layout L = T(simple)(2, n);
  R *in = T(alloc)(2 * 768), *out = T(alloc)(2 * 768);
  p = X(plan_dft_2d)(32, 24, (X(complex)*)in, (X(complex)*)out, FFTW_BACKWARD, FFTW_MEASURE);
  T(Ref) ref;
  T(fill)(C2C, &L, T(cplx)(in), &ref);
  X(execute)(p);
  T(verify)("plan_dft_2d with 2 planner threads", C2C, 1, NULL, &L, T(cplx)(out), &ref);
  X(destroy_plan)(p);
  /* a large transform planned with 2 threads uses FFTW's threaded solvers (also in the compat
     directory, where the shim must load the real threads library itself) */
  R* big = T(alloc)(2 * 256 * 256);
  p = X(plan_dft_2d)(256, 256, (X(complex)*)big, (X(complex)*)big, FFTW_FORWARD, FFTW_ESTIMATE);
  char* text = X(sprint_plan)(p);
  expect(text != NULL && strstr(text, "-thr") != NULL, PREC, "a plan made with 2 planner threads is threaded");
  free(text);
  X(destroy_plan)(p);
  X(free)(big);
  X(plan_with_nthreads)(1);
  X(free)(in), X(free)(out);
}

/* ---- NULL plans, preservation, plan introspection ---- */
static int T(count_char)(char c, void* data) {
  (void)c;
  ++*(int*)data;
  return 0;
}
static void T(write_char)(char c, void* data) { T(count_char)(c, data); }
typedef struct {
  const char* s;
  size_t i;
} T(Reader);
static int T(read_char)(void* data) {
  T(Reader)* r = data;
  return r->s[r->i] ? r->s[r->i++] : EOF;
}

static void T(test_misc)(void) {
  R *a = T(alloc)(256), *b = T(alloc)(256);
  X(forget_wisdom)();
  expect(X(plan_dft_1d)(48, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_MEASURE | FFTW_WISDOM_ONLY) == NULL,
         PREC, "WISDOM_ONLY without wisdom gives NULL");
  expect(X(plan_dft_c2r_2d)(8, 8, (X(complex)*)a, b, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT) == NULL, PREC,
         "2-D c2r with PRESERVE_INPUT gives NULL");
  expect(X(plan_dft_1d)(0, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_ESTIMATE) == NULL, PREC,
         "n=0 gives NULL");
  int bad[] = {4, -2};
  expect(X(plan_dft)(2, bad, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_ESTIMATE) == NULL, PREC,
         "negative n gives NULL");
  int four = 4;
  expect(X(plan_many_dft)(1, &four, -1, (X(complex)*)a, NULL, 1, 4, (X(complex)*)b, NULL, 1, 4, FFTW_FORWARD,
                          FFTW_ESTIMATE) == NULL,
         PREC, "howmany < 0 gives NULL");
  X(destroy_plan)(NULL);
  ++passed;  /* destroy_plan(NULL) returned */

  /* introspection */
  X(plan) p = X(plan_dft_1d)(64, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_ESTIMATE);
  double add = 0, mul = 0, fma = 0;
  X(flops)(p, &add, &mul, &fma);
  expect(add + mul + fma > 64, PREC, "flops");
  expect(X(estimate_cost)(p) > 0, PREC, "estimate_cost");
  expect(X(cost)(p) >= 0, PREC, "cost");
  char* s = X(sprint_plan)(p);
  expect(s != NULL && strlen(s) > 5 && strchr(s, '(') != NULL, PREC, "sprint_plan");
  free(s);
  FILE* f = tmpfile();
  X(fprint_plan)(p, f);
  expect(ftell(f) > 5, PREC, "fprint_plan");
  fclose(f);
  X(print_plan)(p);
  putchar('\n');
  X(destroy_plan)(p);

  /* wisdom round trips */
  p = X(plan_dft_1d)(40, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_MEASURE);
  X(destroy_plan)(p);
  /* Whether that plan left wisdom: with real FFTW it does; a plan the Outboard shim bound to a
     server is not measured locally and leaves none. Either way the round trip must keep it. */
  p = X(plan_dft_1d)(40, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_MEASURE | FFTW_WISDOM_ONLY);
  int had_wisdom = p != NULL;
  X(destroy_plan)(p);
  char* w = X(export_wisdom_to_string)();
  expect(w != NULL && strlen(w) > 10, PREC, "export_wisdom_to_string");
  int count = 0;
  X(export_wisdom)(T(write_char), &count);
  expect(w != NULL && count == (int)strlen(w), PREC, "export_wisdom(write_char)");
  X(forget_wisdom)();
  expect(X(plan_dft_1d)(40, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_MEASURE | FFTW_WISDOM_ONLY) == NULL,
         PREC, "forget_wisdom");
  expect(w != NULL && X(import_wisdom_from_string)(w) == 1, PREC, "import_wisdom_from_string");
  p = X(plan_dft_1d)(40, (X(complex)*)a, (X(complex)*)b, FFTW_FORWARD, FFTW_MEASURE | FFTW_WISDOM_ONLY);
  expect((p != NULL) == had_wisdom, PREC, "WISDOM_ONLY answers as before export/forget/import");
  if (p != NULL) {
    int n = 40;
    Layout L = T(simple)(1, &n);
    T(Ref) ref;
    T(fill)(C2C, &L, T(cplx)(a), &ref);
    X(execute)(p);
    T(verify)("WISDOM_ONLY plan runs", C2C, -1, NULL, &L, T(cplx)(b), &ref);
    X(destroy_plan)(p);
  }
  char path[] = "/tmp/fftw_check_wisdom.XXXXXX";
  int fd = mkstemp(path);
  expect(fd >= 0 && X(export_wisdom_to_filename)(path) == 1, PREC, "export_wisdom_to_filename");
  X(forget_wisdom)();
  expect(X(import_wisdom_from_filename)(path) == 1, PREC, "import_wisdom_from_filename");
  f = fopen(path, "w");
  X(export_wisdom_to_file)(f);
  fclose(f);
  X(forget_wisdom)();
  f = fopen(path, "r");
  expect(X(import_wisdom_from_file)(f) == 1, PREC, "export_wisdom_to_file / import_wisdom_from_file");
  fclose(f);
  unlink(path);
  if (fd >= 0) close(fd);
  X(forget_wisdom)();
  T(Reader) r = {w, 0};
  expect(w != NULL && X(import_wisdom)(T(read_char), &r) == 1, PREC, "import_wisdom(read_char)");
  free(w);
  (void)X(import_system_wisdom)();  /* 0 where /etc/fftw has none */
  X(set_timelimit)(FFTW_NO_TIMELIMIT);

  /* memory: FFTW's allocations and alignment */
  void* m = X(malloc)(1000);
  expect(m != NULL && X(alignment_of)((R*)m) == 0, PREC, "malloc is aligned");
  expect(X(alignment_of)((R*)((char*)m + sizeof(R))) != 0 || sizeof(R) * 2 > 16, PREC, "alignment_of");
  X(free)(m);
  X(free)(a), X(free)(b);
}

/* ---- the legacy Fortran interface, as a Fortran program calls it ---- */
void FORT(plan_dft_2d)(X(plan)*, int*, int*, X(complex)*, X(complex)*, int*, int*);
void FORT(plan_guru_dft)(X(plan)*, int*, const int*, const int*, const int*, int*, const int*, const int*,
                         const int*, X(complex)*, X(complex)*, int*, int*);
void FORT(execute_dft)(X(plan)*, X(complex)*, X(complex)*);
void FORT(execute)(X(plan)*);
void FORT(destroy_plan)(X(plan)*);

static void T(test_fortran)(void) {
  /* a Fortran array in(5, 4): x (5) fastest, so C's [4][5] */
  int nx = 5, ny = 4, sign = FFTW_FORWARD, flags = FFTW_ESTIMATE;
  int n[] = {4, 5};
  Layout L = T(simple)(2, n);
  R *in = T(alloc)(40), *out = T(alloc)(40);
  X(plan) p = NULL;
  FORT(plan_dft_2d)(&p, &nx, &ny, (X(complex)*)in, (X(complex)*)out, &sign, &flags);
  T(Ref) ref;
  T(fill)(C2C, &L, T(cplx)(in), &ref);
  FORT(execute)(&p);
  T(verify)("Fortran plan_dft_2d + execute", C2C, -1, NULL, &L, T(cplx)(out), &ref);
  T(fill)(C2C, &L, T(cplx)(out), &ref);
  FORT(execute_dft)(&p, (X(complex)*)out, (X(complex)*)in);
  T(verify)("Fortran execute_dft", C2C, -1, NULL, &L, T(cplx)(in), &ref);
  FORT(destroy_plan)(&p);
  /* guru: n(1) = 5 with stride 1 (fastest), n(2) = 4 with stride 5; a batch of 2 */
  int rank = 2, fn[] = {5, 4}, fs[] = {1, 5}, hrank = 1, hn[] = {2}, hs[] = {20};
  Layout G = rowmajor(2, n, NULL, NULL, 1, 1, 2, 20, 20);
  R *gi = T(alloc)(80), *go = T(alloc)(80);
  int bsign = FFTW_BACKWARD;
  FORT(plan_guru_dft)(&p, &rank, fn, fs, fs, &hrank, hn, hs, hs, (X(complex)*)gi, (X(complex)*)go, &bsign, &flags);
  T(fill)(C2C, &G, T(cplx)(gi), &ref);
  FORT(execute)(&p);
  T(verify)("Fortran plan_guru_dft", C2C, 1, NULL, &G, T(cplx)(go), &ref);
  FORT(destroy_plan)(&p);
  X(free)(in), X(free)(out), X(free)(gi), X(free)(go);
}

/* ---- large problems: inputs of 128 KiB and more (single precision too), so that a remote
   runtime sending calls in small chunks sends these in several; small transforms in large batches
   keep the reference cheap. Dense and strided, in and out of place, split, every kind. ---- */
static void T(test_large)(void) {
  char what[160];
  T(Ref) ref;
  /* c2c 8x8, 512 batches: out of place, then in place */
  for (int inplace = 0; inplace <= 1; ++inplace) {
    int n[] = {8, 8};
    Layout L = rowmajor(2, n, NULL, NULL, 1, 1, 512, 64, 64);
    R *in = T(alloc)(2 * 64 * 512), *out = inplace ? in : T(alloc)(2 * 64 * 512);
    X(plan) p = X(plan_many_dft)(2, n, 512, (X(complex)*)in, NULL, 1, 64, (X(complex)*)out, NULL, 1, 64,
                                 FFTW_FORWARD, FFTW_ESTIMATE);
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    snprintf(what, sizeof what, "large plan_many_dft 8x8 *512%s", inplace ? " in-place" : "");
    T(verify)(what, C2C, -1, NULL, &L, T(cplx)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in);
    if (!inplace) X(free)(out);
  }
  /* c2c 16 points, 2048 batches with gaps on both sides (gathered and scattered), backward */
  {
    int n = 16;
    Layout L = rowmajor(1, &n, NULL, NULL, 1, 1, 2048, 17, 19);
    R *in = T(alloc)(2 * 17 * 2048), *out = T(alloc)(2 * 19 * 2048);
    X(plan) p = X(plan_many_dft)(1, &n, 2048, (X(complex)*)in, NULL, 1, 17, (X(complex)*)out, NULL, 1, 19,
                                 FFTW_BACKWARD, FFTW_ESTIMATE);
    T(fill)(C2C, &L, T(cplx)(in), &ref);
    X(execute)(p);
    T(verify)("large plan_many_dft 16 *2048 with gaps", C2C, 1, NULL, &L, T(cplx)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
  }
  /* split c2c, 16 points, 2048 batches */
  {
    int n = 16;
    Layout L = rowmajor(1, &n, NULL, NULL, 1, 1, 2048, 16, 16);
    X(iodim64) d[1], h[1];
    T(guru64_dims)(&L, d, h);
    R *ri = T(alloc)(16 * 2048), *ii = T(alloc)(16 * 2048), *ro = T(alloc)(16 * 2048), *io = T(alloc)(16 * 2048);
    X(plan) p = X(plan_guru64_split_dft)(1, d, 1, h, ri, ii, ro, io, FFTW_ESTIMATE);
    T(fill)(C2C, &L, T(splt)(ri, ii), &ref);
    X(execute)(p);
    T(verify)("large plan_guru64_split_dft 16 *2048", C2C, -1, NULL, &L, T(splt)(ro, io), &ref);
    X(destroy_plan)(p);
    X(free)(ri), X(free)(ii), X(free)(ro), X(free)(io);
  }
  /* r2c and c2r 8x16, 512 batches, out of place; then in place with padded real rows */
  for (int kind = R2C; kind <= C2R; ++kind) {
    const char* k = kind == R2C ? "r2c" : "c2r";
    int n[] = {8, 16}, half[] = {8, 9};
    Layout L = kind == R2C ? rowmajor(2, n, NULL, half, 1, 1, 512, 128, 72)
                           : rowmajor(2, n, half, NULL, 1, 1, 512, 72, 128);
    R *r = T(alloc)(128 * 512), *c = T(alloc)(2 * 72 * 512);
    X(plan) p = kind == R2C ? X(plan_many_dft_r2c)(2, n, 512, r, NULL, 1, 128, (X(complex)*)c, NULL, 1, 72, FFTW_ESTIMATE)
                            : X(plan_many_dft_c2r)(2, n, 512, (X(complex)*)c, NULL, 1, 72, r, NULL, 1, 128, FFTW_ESTIMATE);
    T(fill)(kind, &L, kind == R2C ? T(real)(r) : T(cplx)(c), &ref);
    X(execute)(p);
    snprintf(what, sizeof what, "large plan_many_dft_%s 8x16 *512", k);
    T(verify)(what, kind, 0, NULL, &L, kind == R2C ? T(cplx)(c) : T(real)(r), &ref);
    X(destroy_plan)(p);
    X(free)(r), X(free)(c);
    /* in place: real rows of 14 padded to 16 (8 complex) */
    int m[] = {8, 14}, pad[] = {8, 16}, mhalf[] = {8, 8};
    L = kind == R2C ? rowmajor(2, m, pad, mhalf, 1, 1, 512, 128, 64) : rowmajor(2, m, mhalf, pad, 1, 1, 512, 64, 128);
    R* a = T(alloc)(128 * 512);
    p = kind == R2C ? X(plan_many_dft_r2c)(2, m, 512, a, pad, 1, 128, (X(complex)*)a, mhalf, 1, 64, FFTW_ESTIMATE)
                    : X(plan_many_dft_c2r)(2, m, 512, (X(complex)*)a, mhalf, 1, 64, a, pad, 1, 128, FFTW_ESTIMATE);
    T(fill)(kind, &L, kind == R2C ? T(real)(a) : T(cplx)(a), &ref);
    X(execute)(p);
    snprintf(what, sizeof what, "large plan_many_dft_%s 8x14 *512 in-place", k);
    T(verify)(what, kind, 0, NULL, &L, kind == R2C ? T(cplx)(a) : T(real)(a), &ref);
    X(destroy_plan)(p);
    X(free)(a);
  }
  /* r2r 8x8, 1024 batches, REDFT10 x RODFT00 */
  {
    int n[] = {8, 8}, kinds[] = {FFTW_REDFT10, FFTW_RODFT00};
    X(r2r_kind) kk[] = {FFTW_REDFT10, FFTW_RODFT00};
    Layout L = rowmajor(2, n, NULL, NULL, 1, 1, 1024, 64, 64);
    R *in = T(alloc)(64 * 1024), *out = T(alloc)(64 * 1024);
    X(plan) p = X(plan_many_r2r)(2, n, 1024, in, NULL, 1, 64, out, NULL, 1, 64, kk, FFTW_ESTIMATE);
    T(fill)(R2R, &L, T(real)(in), &ref);
    X(execute)(p);
    T(verify)("large plan_many_r2r 8x8 *1024", R2R, 0, kinds, &L, T(real)(out), &ref);
    X(destroy_plan)(p);
    X(free)(in), X(free)(out);
  }
}

static void T(run_all)(void) {
  T(test_c2c)();
  T(test_rdft2)(R2C);
  T(test_rdft2)(C2R);
  T(test_r2r)();
  T(test_new_array)();
  T(test_threads)();
  T(test_misc)();
  T(test_fortran)();
  T(test_large)();
  /* cleanup destroys every plan still alive (they must not be used after) */
  R* a = T(alloc)(64);
  X(plan_dft_1d)(16, (X(complex)*)a, (X(complex)*)a, FFTW_FORWARD, FFTW_ESTIMATE);
  X(plan_r2r_1d)(16, a, a, FFTW_REDFT10, FFTW_ESTIMATE);
  X(cleanup_threads)();
  X(cleanup)();
  X(free)(a);
  ++passed;  /* cleanup returned */
}

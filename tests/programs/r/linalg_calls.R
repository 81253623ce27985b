# R's own linear algebra (svd, eigen, solve, chol, chol2inv, determinant, qr, crossprod, lm.fit),
# the calls that reach LAPACK and BLAS in an unmodified R: one line per call, "name value...", each
# value with 12 significant digits. tests/integration/r_linalg.sh runs it plain and through
# Outboard and compares. Usage: Rscript linalg_calls.R [N]
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) > 0) as.integer(args[1]) else 400
set.seed(35)
a <- matrix(rnorm(n * n), n)
s <- crossprod(a) / n + diag(n)
z <- matrix(complex(real = rnorm(n * n), imaginary = rnorm(n * n)), n)
h <- Conj(t(z)) %*% z / n + diag(n)
results <- list(
  svd = svd(a)$d[1:4],                                  # dgesdd
  svd_vectors = abs(svd(a)$u[1:3, 1]),
  La.svd = La.svd(a, nu = 0, nv = 0)$d[1:4],            # dgesdd, jobz N
  svd_complex = svd(z)$d[1:4],                          # zgesdd
  eigen_sym = eigen(s, symmetric = TRUE)$values[1:4],   # dsyevr
  eigen_sym_only = eigen(s, symmetric = TRUE, only.values = TRUE)$values[1:4],
  eigen_herm = eigen(h, symmetric = TRUE)$values[1:4],  # zheev
  eigen_gen = sort(Mod(eigen(a, only.values = TRUE)$values), decreasing = TRUE)[1:4],  # dgeev
  eigen_gen_vectors = sort(Mod(eigen(a)$values), decreasing = TRUE)[1:4],
  solve = sum(solve(a, rep(1, n))),                     # dgesv
  inverse = sum(solve(a)),
  chol = sum(diag(chol(s))),                            # dpotrf
  chol2inv = sum(chol2inv(chol(s))),                    # dpotri
  det = determinant(a)$modulus[1],                      # dgetrf
  qr_default = sum(abs(diag(qr.R(qr(a))))),             # LINPACK's dqrdc2 (R's own)
  crossprod = sum(crossprod(a)[1:5, 1:5]),              # dsyrk
  matmul = sum((a %*% s)[1:5, 1:5]),                    # dgemm
  lm = sum(coef(lm.fit(a[, 1:50], a[, 51])))
)
for (k in names(results)) cat(k, format(results[[k]], digits = 12), "\n")

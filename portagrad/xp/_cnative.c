/* Compiled float32 kernels for NumPy arrays: batch and layer normalization with their
 * gradients, the loops of the implicit-product convolutions and the Winograd F(2x2, 3x3)
 * ones (the GEMMs are MKL's, passed in by address), scaled dot-product attention forward
 * and backward (its products and exp on MKL too), softmax cross-entropy and its gradient
 * by rows, 2-d max pooling and its gradient, ReLU's gradient, GELU and its slope, and
 * Adam's step.
 *
 * Every function takes raw addresses and sizes from portagrad.xp._native, which checks
 * dtypes, shapes and contiguity before calling; each runs without the GIL, so a caller's
 * thread pool can run several parts at once (channels, rows or samples). Moments
 * accumulate in double lanes, other sums in double from lanes of float partial sums.
 * Elementwise results are computed in float in the same order as the pure-standard
 * defaults, without fused multiply-adds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define WIDE __attribute__((target_clones("avx2", "default")))
#else
#define WIDE
#endif

#define LANES 16

typedef void (*sgemm_t)(int, int, int, int, int, int, float, const float *, int,
                        const float *, int, float, float *, int);

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef Py_ssize_t idx;

/* -- a pool of threads for parts of compiled work ---------------------------------------
 * ``run_parts(fn, ctx, n)`` runs fn(ctx, 0 .. n-1) at once: part 0 on the calling thread
 * (which holds no GIL by then), the others on threads of this pool, none of which ever
 * runs Python. Between tasks a worker spins for SPIN_NS before it sleeps: handing a part
 * to a sleeping thread took 75-90 us on the 2-core machine (the wake-up of an idle core),
 * a spinning one takes about 1 us, and a layer's products come tens of microseconds
 * apart. One task at a time: a second caller meanwhile runs its parts itself, in turn.
 * A forked child starts with no workers (they are not copied) and makes new ones. */

typedef void (*part_fn)(void *ctx, int part, int nparts);

#define SPIN_NS 1000000L /* 1 ms: against 0.2, an MLP step at two threads 0.95 of the time */
#define MAX_WORKERS 63

/* ``ticket``: a task's number (high bits) and part count (low 8 bits) in one word, so a
 * worker reads them together; ``fn`` and ``ctx`` are written before it, and rewritten
 * only once every part of the task before has ended. */
static struct {
    pthread_mutex_t mu, busy;
    pthread_cond_t cv;
    int workers;
    _Atomic unsigned long ticket;
    _Atomic int pending, sleeping;
    part_fn fn;
    void *ctx;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
           0, 0, 0, NULL, NULL};

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

typedef struct {
    unsigned long me, seen;
} worker_start;

static void *worker_main(void *arg) {
    /* the ticket when it was made, not when it starts: a task posted in between is its */
    unsigned long me = ((worker_start *)arg)->me, seen = ((worker_start *)arg)->seen;
    free(arg);
    for (;;) {
        long t0 = now_ns();
        unsigned spins = 0;
        unsigned long t;
        while ((t = atomic_load_explicit(&pool.ticket, memory_order_acquire)) == seen) {
            relax();
            if ((++spins & 255) == 0) {
                if (now_ns() - t0 < SPIN_NS) {
                    sched_yield();  /* a thread waiting for this core gets it */
                    continue;
                }
                pthread_mutex_lock(&pool.mu);
                atomic_fetch_add(&pool.sleeping, 1);
                while (atomic_load(&pool.ticket) == seen) pthread_cond_wait(&pool.cv, &pool.mu);
                atomic_fetch_sub(&pool.sleeping, 1);
                pthread_mutex_unlock(&pool.mu);
            }
        }
        seen = t;
        if (me < (t & 255)) {
            pool.fn(pool.ctx, (int)me, (int)(t & 255));
            atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_release);
        }
    }
    return NULL;
}

static void pool_after_fork(void) {
    pthread_mutex_init(&pool.mu, NULL);
    pthread_mutex_init(&pool.busy, NULL);
    pthread_cond_init(&pool.cv, NULL);
    pool.workers = 0;
    atomic_store(&pool.sleeping, 0);
    atomic_store(&pool.pending, 0);
}

/* start workers 1 .. n-1 where missing; how many parts can run at once after */
static int pool_grow(int n) {
    static int registered = 0;
    if (!registered) {
        pthread_atfork(NULL, NULL, pool_after_fork);
        registered = 1;
    }
    while (pool.workers < n - 1 && pool.workers < MAX_WORKERS) {
        pthread_t t;
        pthread_attr_t attr;
        worker_start *start = malloc(sizeof(worker_start));
        if (!start) break;
        start->me = (unsigned long)(pool.workers + 1);
        start->seen = atomic_load(&pool.ticket);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int err = pthread_create(&t, &attr, worker_main, start);
        pthread_attr_destroy(&attr);
        if (err) {
            free(start);
            break;
        }
        pool.workers++;
    }
    return pool.workers + 1;
}

/* call without the GIL */
static void run_parts(part_fn fn, void *ctx, int n) {
    if (n > 1 && pthread_mutex_trylock(&pool.busy) == 0) {
        int most = pool_grow(n);
        if (n > most) n = most;
        if (n > 1) {
            pool.fn = fn;
            pool.ctx = ctx;
            atomic_store(&pool.pending, n - 1);
            unsigned long t = atomic_load(&pool.ticket);
            atomic_store(&pool.ticket, (((t >> 8) + 1) << 8) | (unsigned long)n);
            if (atomic_load(&pool.sleeping)) {
                pthread_mutex_lock(&pool.mu);
                pthread_cond_broadcast(&pool.cv);
                pthread_mutex_unlock(&pool.mu);
            }
            fn(ctx, 0, n);
            unsigned spins = 0;
            while (atomic_load_explicit(&pool.pending, memory_order_acquire)) {
                relax();
                if ((++spins & 1023) == 0) sched_yield();
            }
            pthread_mutex_unlock(&pool.busy);
            return;
        }
        pthread_mutex_unlock(&pool.busy);
    }
    for (int i = 0; i < n; i++) fn(ctx, i, n);
}

/* the part's share [lo, hi) of range(total) */
static void share(idx total, int part, int nparts, idx *lo, idx *hi) {
    *lo = total * part / nparts;
    *hi = total * (part + 1) / nparts;
}

/* a kernel's loop over [lo, hi) of its rows, channels or elements, as part ``part`` */
typedef void (*range_body)(const void *args, idx lo, idx hi, int part);

typedef struct {
    range_body body;
    const void *args;
    idx lo, hi, align;
} range_task;

static void range_part(void *ctx, int part, int nparts) {
    const range_task *t = (const range_task *)ctx;
    idx units = (t->hi - t->lo + t->align - 1) / t->align, u0, u1;
    share(units, part, nparts, &u0, &u1);
    idx lo = t->lo + u0 * t->align, hi = t->lo + u1 * t->align;
    if (hi > t->hi) hi = t->hi;
    if (hi > lo) t->body(t->args, lo, hi, part);
}

/* body over [lo, hi) in ``nparts`` runs of whole ``align``-sized units, at once; call
 * without the GIL */
static void run_range(range_body body, const void *args, idx lo, idx hi, int nparts,
                      idx align) {
    range_task t = {body, args, lo, hi, align < 1 ? 1 : align};
    run_parts(range_part, &t, nparts < 1 ? 1 : nparts);
}

/* -- a GEMM split by rows or columns of its output over the pool ----------------------
 * C = alpha op(A) op(B) + beta C (row-major, 32-bit sizes as MKL's LP64), float32 or
 * float64; with a bias (one value per column of C), each part first writes it into its
 * block of C and adds its product there (beta = 1). */

typedef void (*dgemm_t)(int, int, int, int, int, int, double, const double *, int,
                        const double *, int, double, double *, int);

typedef struct {
    void *gemm;
    int f64, ta, tb, axis;
    idx m, n, k, lda, ldb, ldc;
    double beta;
    const char *a, *b, *bias;
    char *c;
} gemm_task;

static void gemm_part(void *ctx, int part, int nparts) {
    gemm_task *t = (gemm_task *)ctx;
    size_t item = t->f64 ? 8 : 4;
    idx lo, hi, m = t->m, n = t->n;
    const char *a = t->a, *b = t->b;
    char *c = t->c;
    share(t->axis ? n : m, part, nparts, &lo, &hi);
    if (hi <= lo) return;
    if (t->axis == 0) {
        a += (size_t)(t->ta == NO_TRANS ? lo * t->lda : lo) * item;
        c += (size_t)(lo * t->ldc) * item;
        m = hi - lo;
    } else {
        b += (size_t)(t->tb == NO_TRANS ? lo : lo * t->ldb) * item;
        c += (size_t)lo * item;
        n = hi - lo;
    }
    double beta = t->beta;
    if (t->bias) {
        const char *bias = t->bias + (size_t)(t->axis ? lo : 0) * item;
        for (idx r = 0; r < m; r++) memcpy(c + (size_t)(r * t->ldc) * item, bias, n * item);
        beta = 1.0;
    }
    if (t->f64)
        ((dgemm_t)t->gemm)(ROW_MAJOR, t->ta, t->tb, (int)m, (int)n, (int)t->k, 1.0,
                           (const double *)a, (int)t->lda, (const double *)b, (int)t->ldb,
                           beta, (double *)c, (int)t->ldc);
    else
        ((sgemm_t)t->gemm)(ROW_MAJOR, t->ta, t->tb, (int)m, (int)n, (int)t->k, 1.0f,
                           (const float *)a, (int)t->lda, (const float *)b, (int)t->ldb,
                           (float)beta, (float *)c, (int)t->ldc);
}

static PyObject *gemm_parts(PyObject *self, PyObject *args) {
    uintptr_t pgemm, pa, pb, pc, pbias;
    gemm_task t;
    int nparts;
    if (!PyArg_ParseTuple(args, "KiiinnnKnKndKnKi", &pgemm, &t.f64, &t.ta, &t.tb, &t.m, &t.n,
                          &t.k, &pa, &t.lda, &pb, &t.ldb, &t.beta, &pc, &t.ldc, &pbias,
                          &nparts))
        return NULL;
    t.gemm = (void *)pgemm;
    t.a = (const char *)pa;
    t.b = (const char *)pb;
    t.c = (char *)pc;
    t.bias = (const char *)pbias;
    /* along the longer of the output's axes: each part keeps a long product */
    t.axis = t.m >= t.n ? 0 : 1;
    Py_BEGIN_ALLOW_THREADS
    run_parts(gemm_part, &t, nparts);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* LANES floats as two vectors of 8 (gcc's and clang's vector extensions), lane j of a loop
 * below summing elements i + j as the arrays of LANES floats did before: kept in
 * registers, where gcc left those arrays on the stack (sum(g) and sum(g (x - m)) over 2M
 * elements took 1.8 ms that way, 0.58 so; the same sums, bit for bit). */
typedef float v8f __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));

/* macros, not functions: a function passing a vector by value warns of its ABI where the
 * default build has no AVX */
#define v8_load(p)                        \
    __extension__({                       \
        v8f v_;                           \
        memcpy(&v_, (p), sizeof v_);      \
        v_;                               \
    })
#define v8_store(p, v) memcpy((p), &(v), sizeof(v8f))
#define v8_splat(a) ((v8f){(a), (a), (a), (a), (a), (a), (a), (a)})

/* -- sums of runs of float ------------------------------------------------------------
 * The moments accumulate in double lanes: float32 squares can neither overflow nor lose
 * the small deviations of a large mean. */

WIDE static double run_sum(const float *p, idx n) {
    double acc[LANES] = {0};
    idx i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++) acc[j] += p[i + j];
    double s = 0.0;
    for (int j = 0; j < LANES; j++) s += acc[j];
    for (; i < n; i++) s += p[i];
    return s;
}

/* sum((p - m)^2) */
WIDE static double run_sq_dev(const float *p, idx n, double m) {
    double acc[LANES] = {0};
    idx i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++) {
            double d = p[i + j] - m;
            acc[j] += d * d;
        }
    double s = 0.0;
    for (int j = 0; j < LANES; j++) s += acc[j];
    for (; i < n; i++) {
        double d = p[i] - m;
        s += d * d;
    }
    return s;
}

/* the maximum of a run, NaN if any is NaN (as NumPy's max) */
WIDE static float row_max(const float *restrict x, idx n) {
    v8f m0 = v8_splat(-INFINITY), m1 = m0;
    v8i n0 = {0}, n1 = {0};
    idx i = 0;
    for (; i + LANES <= n; i += LANES) {
        v8f a0 = v8_load(x + i), a1 = v8_load(x + i + 8);
        v8i g0 = a0 > m0, g1 = a1 > m1; /* a > mx ? a : mx, lane by lane */
        m0 = (v8f)(((v8i)a0 & g0) | ((v8i)m0 & ~g0));
        m1 = (v8f)(((v8i)a1 & g1) | ((v8i)m1 & ~g1));
        n0 |= a0 != a0;
        n1 |= a1 != a1;
    }
    float mx[LANES];
    int nan[LANES];
    v8_store(mx, m0), v8_store(mx + 8, m1);
    memcpy(nan, &n0, sizeof n0), memcpy(nan + 8, &n1, sizeof n1);
    float m = -INFINITY, any_nan = 0.0f;
    for (int j = 0; j < LANES; j++) {
        m = mx[j] > m ? mx[j] : m;
        if (nan[j]) any_nan = 1.0f;
    }
    for (; i < n; i++) {
        m = x[i] > m ? x[i] : m;
        if (x[i] != x[i]) any_nan = 1.0f;
    }
    return any_nan != 0.0f ? NAN : m;
}

/* sum(g) and sum(g * (x - m)) */
WIDE static void run_grad_sums(const float *g, const float *x, idx n, float m, double *sg,
                               double *sgd) {
    v8f a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}, mm = v8_splat(m);
    idx i = 0;
    for (; i + LANES <= n; i += LANES) {
        v8f g0 = v8_load(g + i), g1 = v8_load(g + i + 8);
        a0 += g0, a1 += g1;
        b0 += g0 * (v8_load(x + i) - mm);
        b1 += g1 * (v8_load(x + i + 8) - mm);
    }
    float a[LANES], b[LANES];
    v8_store(a, a0), v8_store(a + 8, a1), v8_store(b, b0), v8_store(b + 8, b1);
    double s1 = 0.0, s2 = 0.0;
    for (int j = 0; j < LANES; j++) {
        s1 += a[j];
        s2 += b[j];
    }
    for (; i < n; i++) {
        s1 += g[i];
        s2 += (double)g[i] * (x[i] - m);
    }
    *sg += s1;
    *sgd += s2;
}

/* y = (x - m) * k (+ b) */
WIDE static void run_affine(const float *restrict x, float *restrict y, idx n, float m,
                            float k, float b, int has_b) {
    if (has_b) {
        for (idx i = 0; i < n; i++) {
            float t = x[i] - m;
            t = t * k;
            y[i] = t + b;
        }
    } else {
        for (idx i = 0; i < n; i++) {
            float t = x[i] - m;
            y[i] = t * k;
        }
    }
}

/* gx = (x - m) * a - s + g * k */
WIDE static void run_bn_gx(const float *restrict g, const float *restrict x,
                           float *restrict gx, idx n, float m, float a, float s, float k) {
    for (idx i = 0; i < n; i++) {
        float t = x[i] - m;
        t = t * a;
        t = t - s;
        gx[i] = t + g[i] * k;
    }
}

/* Mean and sum of squared deviations of a run; the second pass finds it in cache. */
static void run_moments(const float *p, idx n, double *mean, double *m2) {
    double m = run_sum(p, n) / (double)n;
    *mean = m;
    *m2 = run_sq_dev(p, n, m);
}

/* -- batch normalization, (N, C, HW) -------------------------------------------------- */

typedef struct {
    const float *x, *w, *b, *g, *mean_in, *inv_in;
    float *y, *mean, *inv, *var, *gx, *sgd, *sgy;
    idx n, c, hw;
    double eps, count;
} bn_args;

static void bn_forward_body(const void *args, idx c0, idx c1, int part) {
    const bn_args *A = (const bn_args *)args;
    const float *x = A->x, *w = A->w, *b = A->b;
    float *y = A->y, *mean = A->mean, *inv = A->inv, *var = A->var;
    idx n = A->n, c = A->c, hw = A->hw;
    double eps = A->eps;
    for (idx ch = c0; ch < c1; ch++) {
        /* Chan's combination of the planes' moments: one read of x from memory, the
         * second pass over each plane finds it in cache. */
        double mu = 0.0, m2 = 0.0, count = 0.0;
        for (idx s = 0; s < n; s++) {
            double pm, pq;
            run_moments(x + (s * c + ch) * hw, hw, &pm, &pq);
            double tot = count + (double)hw, delta = pm - mu;
            mu += delta * ((double)hw / tot);
            m2 += pq + delta * delta * (count * (double)hw / tot);
            count = tot;
        }
        float mf = (float)mu, vf = (float)(m2 / count);
        float invf = 1.0f / sqrtf(vf + (float)eps);
        mean[ch] = mf;
        var[ch] = vf;
        inv[ch] = invf;
        float k = w ? invf * w[ch] : invf;
        float bb = b ? b[ch] : 0.0f;
        for (idx s = 0; s < n; s++) {
            idx off = (s * c + ch) * hw;
            run_affine(x + off, y + off, hw, mf, k, bb, b != NULL);
        }
    }
}

static PyObject *bn_forward(PyObject *self, PyObject *args) {
    uintptr_t px, py, pw, pb, pmean, pinv, pvar;
    bn_args a = {0};
    idx c0, c1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKKKKnnnnnd|i", &px, &py, &pw, &pb, &pmean, &pinv, &pvar,
                          &a.n, &a.c, &a.hw, &c0, &c1, &a.eps, &nparts))
        return NULL;
    a.x = (const float *)px, a.w = (const float *)pw, a.b = (const float *)pb;
    a.y = (float *)py, a.mean = (float *)pmean, a.inv = (float *)pinv, a.var = (float *)pvar;
    Py_BEGIN_ALLOW_THREADS
    run_range(bn_forward_body, &a, c0, c1, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static void bn_backward_body(const void *args, idx c0, idx c1, int part) {
    const bn_args *A = (const bn_args *)args;
    const float *g = A->g, *x = A->x, *w = A->w, *mean = A->mean_in, *inv = A->inv_in;
    float *gx = A->gx, *sgd = A->sgd, *sgy = A->sgy;
    idx n = A->n, c = A->c, hw = A->hw;
    double count = A->count;
    for (idx ch = c0; ch < c1; ch++) {
        double s1 = 0.0, s2 = 0.0;
        float m = mean[ch];
        for (idx s = 0; s < n; s++) {
            idx off = (s * c + ch) * hw;
            run_grad_sums(g + off, x + off, hw, m, &s1, &s2);
        }
        float fd = (float)s2, fg = (float)s1;
        sgd[ch] = fd;
        sgy[ch] = fg;
        if (gx) {
            /* the NumPy path's terms: a = -k inv^2 sum(g d) / n, s = k sum(g) / n */
            float iv = inv[ch];
            float k = w ? iv * w[ch] : iv;
            float a = k * iv * iv * (float)((double)fd * (-1.0 / count));
            float sv = k * (float)((double)fg * (1.0 / count));
            for (idx s = 0; s < n; s++) {
                idx off = (s * c + ch) * hw;
                run_bn_gx(g + off, x + off, gx + off, hw, m, a, sv, k);
            }
        }
    }
}

static PyObject *bn_backward(PyObject *self, PyObject *args) {
    uintptr_t pg, px, pw, pmean, pinv, pgx, psgd, psgy;
    bn_args a = {0};
    idx c0, c1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKKKKKnnnnnd|i", &pg, &px, &pw, &pmean, &pinv, &pgx, &psgd,
                          &psgy, &a.n, &a.c, &a.hw, &c0, &c1, &a.count, &nparts))
        return NULL;
    a.g = (const float *)pg, a.x = (const float *)px, a.w = (const float *)pw;
    a.mean_in = (const float *)pmean, a.inv_in = (const float *)pinv;
    a.gx = (float *)pgx, a.sgd = (float *)psgd, a.sgy = (float *)psgy;
    Py_BEGIN_ALLOW_THREADS
    run_range(bn_backward_body, &a, c0, c1, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* -- layer normalization over rows (M, K) ----------------------------------------------- */

/* y = (x - m) * rs (* w) (+ b) */
WIDE static void ln_row(const float *restrict x, const float *restrict w,
                        const float *restrict b, float *restrict y, idx k, float m, float rs) {
    if (w && b)
        for (idx i = 0; i < k; i++) {
            float t = x[i] - m;
            t = t * rs;
            t = t * w[i];
            y[i] = t + b[i];
        }
    else if (w)
        for (idx i = 0; i < k; i++) {
            float t = x[i] - m;
            t = t * rs;
            y[i] = t * w[i];
        }
    else if (b)
        for (idx i = 0; i < k; i++) {
            float t = x[i] - m;
            t = t * rs;
            y[i] = t + b[i];
        }
    else
        for (idx i = 0; i < k; i++) {
            float t = x[i] - m;
            y[i] = t * rs;
        }
}

typedef struct {
    const float *x, *w, *b, *g, *mean_in, *rstd_in;
    float *y, *mean, *rstd, *gx, *gw, *gb, *scratch;
    idx k;
    double eps;
} ln_args;

static void ln_forward_body(const void *args, idx r0, idx r1, int part) {
    const ln_args *A = (const ln_args *)args;
    const float *x = A->x, *w = A->w, *b = A->b;
    float *y = A->y, *mean = A->mean, *rstd = A->rstd;
    idx k = A->k;
    double eps = A->eps;
    for (idx r = r0; r < r1; r++) {
        const float *xr = x + r * k;
        float *yr = y + r * k;
        double mu, m2;
        run_moments(xr, k, &mu, &m2);
        float mf = (float)mu;
        float rs = (float)(1.0 / sqrt(m2 / (double)k + eps));
        mean[r] = mf;
        rstd[r] = rs;
        ln_row(xr, w, b, yr, k, mf, rs);
    }
}

static PyObject *ln_forward(PyObject *self, PyObject *args) {
    uintptr_t px, pw, pb, py, pmean, prstd;
    ln_args a = {0};
    idx r0, r1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKKKnnnd|i", &px, &pw, &pb, &py, &pmean, &prstd, &a.k, &r0,
                          &r1, &a.eps, &nparts))
        return NULL;
    a.x = (const float *)px, a.w = (const float *)pw, a.b = (const float *)pb;
    a.y = (float *)py, a.mean = (float *)pmean, a.rstd = (float *)prstd;
    Py_BEGIN_ALLOW_THREADS
    run_range(ln_forward_body, &a, r0, r1, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

WIDE static void ln_row_grad(const float *xr, const float *gr, const float *w, float *gxr,
                             float *gw, float *gb, float *xh, float *gg, idx k, float m,
                             float rs) {
    for (idx i = 0; i < k; i++) {
        float t = xr[i] - m;
        xh[i] = t * rs;
    }
    if (gw)
        for (idx i = 0; i < k; i++) gw[i] += gr[i] * xh[i];
    if (gb)
        for (idx i = 0; i < k; i++) gb[i] += gr[i];
    if (!gxr) return;
    const float *g = gr;
    if (w) {
        for (idx i = 0; i < k; i++) gg[i] = gr[i] * w[i];
        g = gg;
    }
    double s1 = 0.0, s2 = 0.0;
    run_grad_sums(g, xh, k, 0.0f, &s1, &s2); /* sum(g), sum(g * xhat) */
    float c1 = (float)(s1 / (double)k), c2 = (float)(s2 * (-1.0 / (double)k));
    float q = c2 * rs;
    for (idx j = 0; j < k; j++) {
        float t = g[j] - c1;
        t = t * rs;
        gxr[j] = t + xh[j] * q;
    }
}

/* part ``part`` sums into row ``part`` of gw and gb, (nparts, k) each, and works in its
 * own 2k of scratch */
static void ln_backward_body(const void *args, idx r0, idx r1, int part) {
    const ln_args *A = (const ln_args *)args;
    idx k = A->k;
    float *gw = A->gw ? A->gw + part * k : NULL, *gb = A->gb ? A->gb + part * k : NULL;
    float *scratch = A->scratch + part * 2 * k;
    for (idx r = r0; r < r1; r++)
        ln_row_grad(A->x + r * k, A->g + r * k, A->w, A->gx ? A->gx + r * k : NULL, gw, gb,
                    scratch, scratch + k, k, A->mean_in[r], A->rstd_in[r]);
}

static PyObject *ln_backward(PyObject *self, PyObject *args) {
    uintptr_t px, pw, pg, pmean, prstd, pgx, pgw, pgb, pscratch;
    ln_args a = {0};
    idx r0, r1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKKKKKKnnn|i", &px, &pw, &pg, &pmean, &prstd, &pgx, &pgw,
                          &pgb, &pscratch, &a.k, &r0, &r1, &nparts))
        return NULL;
    a.x = (const float *)px, a.w = (const float *)pw, a.g = (const float *)pg;
    a.mean_in = (const float *)pmean, a.rstd_in = (const float *)prstd;
    a.gx = (float *)pgx, a.gw = (float *)pgw, a.gb = (float *)pgb;
    a.scratch = (float *)pscratch;
    Py_BEGIN_ALLOW_THREADS
    run_range(ln_backward_body, &a, r0, r1, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* -- ReLU's gradient: gy where y > 0, else 0 (times the mask, so NaN or inf in gy still
 * gives NaN where y <= 0, as the default's product does) ---------------------------------- */

WIDE static void run_relu_grad(const float *restrict gy, const float *restrict y,
                               float *restrict out, idx n) {
    for (idx i = 0; i < n; i++) {
        float m = (float)(y[i] > 0.0f); /* a mask, not a branch: the loop vectorizes */
        out[i] = gy[i] * m;
    }
}

static PyObject *relu_grad(PyObject *self, PyObject *args) {
    uintptr_t pgy, py, pout;
    idx n;
    if (!PyArg_ParseTuple(args, "KKKn", &pgy, &py, &pout, &n)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    run_relu_grad((const float *)pgy, (const float *)py, (float *)pout, n);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

typedef void (*vml_t)(int, const float *, float *, long long);

/* -- scaled dot-product attention of B batch items, split over the pool's threads -----
 * q (B, L, D), k (B, S, D), v (B, S, Dv) and the output (B, L, Dv), each a stack of
 * matrices with contiguous rows at its own strides (a time-major (L, B, D) layout read as
 * it is), the probabilities p (B, L, S) in C order; an additive (L, S) mask or none, and
 * causal masking of keys after the query. The products are MKL's (by address), the exp
 * its vector function. */

/* a row of scores: scaled, keys from ``keep`` on masked (-inf), the mask row added, the
 * row's maximum subtracted (NaN if any is NaN, as NumPy's max) */
WIDE static void score_row(float *restrict row, idx n, float sc, const float *restrict mask,
                           idx keep) {
    for (idx j = 0; j < n; j++) row[j] = row[j] * sc;
    for (idx j = keep; j < n; j++) row[j] = -INFINITY;
    if (mask)
        for (idx j = 0; j < n; j++) row[j] = row[j] + mask[j];
    float m = row_max(row, n);
    for (idx j = 0; j < n; j++) row[j] = row[j] - m;
}

/* ds = (ds - sum(ds * p)) * p * scale, one row */
WIDE static void ds_row(float *restrict row, const float *restrict p, idx n, float sc) {
    v8f c0 = {0}, c1 = {0};
    idx i = 0;
    for (; i + LANES <= n; i += LANES) {
        c0 += v8_load(row + i) * v8_load(p + i);
        c1 += v8_load(row + i + 8) * v8_load(p + i + 8);
    }
    float acc[LANES];
    v8_store(acc, c0), v8_store(acc + 8, c1);
    double dot = 0.0;
    for (int j = 0; j < LANES; j++) dot += acc[j];
    for (; i < n; i++) dot += (double)row[i] * p[i];
    float fd = (float)dot;
    for (idx j = 0; j < n; j++) {
        float t = row[j] - fd;
        t = t * p[j];
        row[j] = t * sc;
    }
}

typedef struct {
    sgemm_t gemm;
    vml_t vexp;
    long long mode;
    const float *q, *k, *v, *mask, *p_in, *g;
    float *p, *out, *gq, *gk, *gv, *ds;
    const long long *lay;
    idx B, L, S, D, Dv;
    float scale;
    int causal;
} attention_task;

static void attention_forward_part(void *ctx, int part, int nparts) {
    attention_task *t = (attention_task *)ctx;
    const long long *lay = t->lay;
    idx L = t->L, S = t->S, D = t->D, Dv = t->Dv, b0, b1;
    share(t->B, part, nparts, &b0, &b1);
    for (idx b = b0; b < b1; b++) {
        float *pb = t->p + b * L * S;
        t->gemm(ROW_MAJOR, NO_TRANS, TRANS, (int)L, (int)S, (int)D, 1.0f, t->q + b * lay[0],
                (int)lay[1], t->k + b * lay[2], (int)lay[3], 0.0f, pb, (int)S);
        for (idx i = 0; i < L; i++)
            score_row(pb + i * S, S, t->scale, t->mask ? t->mask + i * S : NULL,
                      t->causal ? i + 1 : S);
        t->vexp((int)(L * S), pb, pb, t->mode);
        for (idx i = 0; i < L; i++) {
            float *row = pb + i * S;
            float fs = (float)run_sum(row, S);
            for (idx j = 0; j < S; j++) row[j] = row[j] / fs;
        }
        t->gemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)L, (int)Dv, (int)S, 1.0f, pb, (int)S,
                t->v + b * lay[4], (int)lay[5], 0.0f, t->out + b * lay[6], (int)lay[7]);
    }
}

static PyObject *attention_forward(PyObject *self, PyObject *args) {
    uintptr_t pgemm, pq, pk, pv, pmask, pp, pout, pexp, play;
    attention_task t;
    double scale;
    int nparts;
    if (!PyArg_ParseTuple(args, "KKKKKKKKnnnnndiKLi", &pgemm, &pq, &pk, &pv, &pmask, &pp,
                          &pout, &play, &t.B, &t.L, &t.S, &t.D, &t.Dv, &scale, &t.causal,
                          &pexp, &t.mode, &nparts))
        return NULL;
    t.gemm = (sgemm_t)pgemm;
    t.vexp = (vml_t)pexp;
    t.q = (const float *)pq, t.k = (const float *)pk, t.v = (const float *)pv;
    t.mask = (const float *)pmask;
    t.p = (float *)pp, t.out = (float *)pout;
    /* per matrix of q, k, v, out: the stride between batch items and between rows, in
     * elements (each row contiguous) */
    t.lay = (const long long *)play;
    t.scale = (float)scale;
    Py_BEGIN_ALLOW_THREADS
    run_parts(attention_forward_part, &t, nparts);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* gv = p^T g, ds = p * (g v^T - rowsum(p * g v^T)) * scale, gq = ds k, gk = ds^T q; each
 * output pointer may be 0 (not wanted) */
static void attention_backward_part(void *ctx, int part, int nparts) {
    attention_task *t = (attention_task *)ctx;
    const long long *lay = t->lay;
    idx L = t->L, S = t->S, D = t->D, Dv = t->Dv, b0, b1;
    float *ds = t->ds + part * L * S;
    share(t->B, part, nparts, &b0, &b1);
    for (idx b = b0; b < b1; b++) {
        const float *pb = t->p_in + b * L * S, *gb = t->g + b * lay[6];
        int ldg = (int)lay[7];
        if (t->gv)
            t->gemm(ROW_MAJOR, TRANS, NO_TRANS, (int)S, (int)Dv, (int)L, 1.0f, pb, (int)S, gb,
                    ldg, 0.0f, t->gv + b * lay[12], (int)lay[13]);
        if (!t->gq && !t->gk) continue;
        t->gemm(ROW_MAJOR, NO_TRANS, TRANS, (int)L, (int)S, (int)Dv, 1.0f, gb, ldg,
                t->v + b * lay[4], (int)lay[5], 0.0f, ds, (int)S);
        for (idx i = 0; i < L; i++) ds_row(ds + i * S, pb + i * S, S, t->scale);
        if (t->gq)
            t->gemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)L, (int)D, (int)S, 1.0f, ds, (int)S,
                    t->k + b * lay[2], (int)lay[3], 0.0f, t->gq + b * lay[8], (int)lay[9]);
        if (t->gk)
            t->gemm(ROW_MAJOR, TRANS, NO_TRANS, (int)S, (int)D, (int)L, 1.0f, ds, (int)S,
                    t->q + b * lay[0], (int)lay[1], 0.0f, t->gk + b * lay[10], (int)lay[11]);
    }
}

static PyObject *attention_backward(PyObject *self, PyObject *args) {
    uintptr_t pgemm, pq, pk, pv, pp, pg, pgq, pgk, pgv, pds, play;
    attention_task t;
    double scale;
    int nparts;
    if (!PyArg_ParseTuple(args, "KKKKKKKKKKKnnnnndi", &pgemm, &pq, &pk, &pv, &pp, &pg, &pgq,
                          &pgk, &pgv, &pds, &play, &t.B, &t.L, &t.S, &t.D, &t.Dv, &scale,
                          &nparts))
        return NULL;
    t.gemm = (sgemm_t)pgemm;
    t.q = (const float *)pq, t.k = (const float *)pk, t.v = (const float *)pv;
    t.p_in = (const float *)pp, t.g = (const float *)pg;
    t.gq = (float *)pgq, t.gk = (float *)pgk, t.gv = (float *)pgv;
    /* ds: an (L, S) scratch per part; lay: the item and row strides (elements) of q, k, v,
     * g, gq, gk, gv, as the forward's */
    t.ds = (float *)pds;
    t.lay = (const long long *)play;
    t.scale = (float)scale;
    Py_BEGIN_ALLOW_THREADS
    run_parts(attention_backward_part, &t, nparts);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* -- softmax cross-entropy over the rows [r0, r1) of (M, C) logits ---------------------
 * Forward: per row its maximum, buf = exp(x - max) (MKL's vector exp), the row sum of buf
 * and x[t] - max. Gradient: g = buf * (c / sum), then c subtracted at the label. */


WIDE static void run_shift(const float *restrict x, float *restrict y, idx n, float m) {
    for (idx i = 0; i < n; i++) y[i] = x[i] - m;
}

WIDE static void run_scale(const float *restrict x, float *restrict y, idx n, float a) {
    for (idx i = 0; i < n; i++) y[i] = x[i] * a;
}

typedef struct {
    const float *x, *cv, *sum_in, *buf_in;
    const int64_t *t;
    float *mx, *sum, *zt, *buf, *g;
    idx c;
    vml_t vexp;
    long long mode;
} xent_args;

/* Without a buffer for exp(x - max) (pbuf 0), each row's terms go through a chunk of
 * this many floats in L1 and are summed there: the forward then reads the logits once and
 * writes nothing of their size, and the gradient makes exp(x - max) again from the logits
 * (softmax_xent_grad_x_rows). At an LSTM language model's (700, 10000) logits, just
 * written by their product, one thread, that took 6.3 + 5.1 ms against 8.7 + 3.8 with the
 * buffer (forward + gradient). */
#define XENT_CHUNK 2048

static void xent_rows_body(const void *args, idx r0, idx r1, int part) {
    const xent_args *A = (const xent_args *)args;
    const float *x = A->x;
    const int64_t *t = A->t;
    float *mx = A->mx, *sum = A->sum, *zt = A->zt, *buf = A->buf;
    idx c = A->c;
    float chunk[XENT_CHUNK];
    for (idx r = r0; r < r1; r++) {
        const float *xr = x + r * c;
        float m = row_max(xr, c);
        mx[r] = m;
        zt[r] = xr[t[r]] - m;
        if (buf) {
            float *br = buf + r * c;
            run_shift(xr, br, c, m);
            A->vexp((int)c, br, br, A->mode);
            sum[r] = (float)run_sum(br, c);
            continue;
        }
        double s = 0.0;
        for (idx j = 0; j < c; j += XENT_CHUNK) {
            idx len = c - j < XENT_CHUNK ? c - j : XENT_CHUNK;
            run_shift(xr + j, chunk, len, m);
            A->vexp((int)len, chunk, chunk, A->mode);
            s += run_sum(chunk, len);
        }
        sum[r] = (float)s;
    }
}

static PyObject *softmax_xent_rows(PyObject *self, PyObject *args) {
    uintptr_t px, pt, pmax, psum, pzt, pbuf, pexp;
    xent_args a = {0};
    idx r0, r1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKKKnnnKL|i", &px, &pt, &pmax, &psum, &pzt, &pbuf, &r0,
                          &r1, &a.c, &pexp, &a.mode, &nparts))
        return NULL;
    a.x = (const float *)px, a.t = (const int64_t *)pt;
    a.mx = (float *)pmax, a.sum = (float *)psum, a.zt = (float *)pzt, a.buf = (float *)pbuf;
    a.vexp = (vml_t)pexp;
    Py_BEGIN_ALLOW_THREADS
    run_range(xent_rows_body, &a, r0, r1, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static void xent_grad_body(const void *args, idx r0, idx r1, int part) {
    const xent_args *A = (const xent_args *)args;
    idx c = A->c;
    for (idx r = r0; r < r1; r++) {
        run_scale(A->buf_in + r * c, A->g + r * c, c, A->cv[r] / A->sum_in[r]);
        A->g[r * c + A->t[r]] -= A->cv[r];
    }
}

/* the gradient from the logits: exp(x - max) * (c / sum), less c at the label */
static void xent_grad_x_body(const void *args, idx r0, idx r1, int part) {
    const xent_args *A = (const xent_args *)args;
    idx c = A->c;
    for (idx r = r0; r < r1; r++) {
        float *gr = A->g + r * c;
        run_shift(A->x + r * c, gr, c, A->mx[r]);
        A->vexp((int)c, gr, gr, A->mode);
        float k = A->cv[r] / A->sum_in[r];
        for (idx i = 0; i < c; i++) gr[i] *= k;
        gr[A->t[r]] -= A->cv[r];
    }
}

static PyObject *softmax_xent_grad_x_rows(PyObject *self, PyObject *args) {
    uintptr_t px, pmax, psum, pc, pt, pg, pexp;
    xent_args a = {0};
    idx r0, r1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKKKnnnKL|i", &px, &pmax, &psum, &pc, &pt, &pg, &r0, &r1,
                          &a.c, &pexp, &a.mode, &nparts))
        return NULL;
    a.x = (const float *)px, a.mx = (float *)pmax, a.sum_in = (const float *)psum;
    a.cv = (const float *)pc, a.t = (const int64_t *)pt, a.g = (float *)pg;
    a.vexp = (vml_t)pexp;
    Py_BEGIN_ALLOW_THREADS
    run_range(xent_grad_x_body, &a, r0, r1, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *softmax_xent_grad_rows(PyObject *self, PyObject *args) {
    uintptr_t pbuf, psum, pc, pt, pg;
    xent_args a = {0};
    idx r0, r1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKKnnn|i", &pbuf, &psum, &pc, &pt, &pg, &r0, &r1, &a.c,
                          &nparts))
        return NULL;
    a.buf_in = (const float *)pbuf, a.sum_in = (const float *)psum, a.cv = (const float *)pc;
    a.t = (const int64_t *)pt, a.g = (float *)pg;
    Py_BEGIN_ALLOW_THREADS
    run_range(xent_grad_body, &a, r0, r1, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* -- 2-d max pooling over the planes [p0, p1) of (N * C, H, W) --------------------------
 * The window of output (i, j) reads rows i * sh - ph + a * dh and columns j * sw - pw +
 * b * dw of the plane, those outside it being padding (-inf, never the winner). The
 * maximum is NaN where the window holds one; the winner is the first (row-major kernel
 * order) element equal to the maximum (the first NaN, where it is NaN), and the gradient sends gy * (winner ? 1 : 0) to
 * every element of the window (so an infinite gy gives NaN at the others, as the
 * masks' products of the NumPy path do). */

typedef struct {
    idx h, w, ho, wo, kh, kw, sh, sw, ph, pw, dh, dw;
} pool_shape;

/* the output columns [lo, hi) whose column j * sw - pw + off lies in [0, w) */
static void pool_cols(const pool_shape *ps, idx off, idx *lo, idx *hi) {
    idx l = 0, r = ps->wo;
    while (l < r && l * ps->sw - ps->pw + off < 0) l++;
    while (r > l && (r - 1) * ps->sw - ps->pw + off >= ps->w) r--;
    *lo = l;
    *hi = r;
}

WIDE static void pool_row_max(const float *restrict xr, float *restrict yr, idx lo, idx hi,
                              idx sw, idx c0) {
    for (idx j = lo; j < hi; j++) {
        float v = xr[j * sw + c0], m = yr[j];
        yr[j] = (m != m) ? m : ((v > m || v != v) ? v : m);
    }
}

/* 2 x 2 windows at stride 2, no padding (the forward): two input rows per output row,
 * read once */
static inline float max_nan(float m, float v) { return (m != m) ? m : ((v > m || v != v) ? v : m); }

WIDE static void pool2_row(const float *restrict x0, const float *restrict x1,
                           float *restrict yr, idx wo) {
    for (idx j = 0; j < wo; j++) {
        float m = max_nan(max_nan(max_nan(x0[2 * j], x0[2 * j + 1]), x1[2 * j]), x1[2 * j + 1]);
        yr[j] = m;
    }
}

/* windows that tile the plane exactly: no padding on either side */
static int pool2(const pool_shape *ps) {
    return ps->kh == 2 && ps->kw == 2 && ps->sh == 2 && ps->sw == 2 && ps->ph == 0 &&
           ps->pw == 0 && ps->dh == 1 && ps->dw == 1 && ps->h == 2 * ps->ho &&
           ps->w == 2 * ps->wo;
}

static PyObject *max_pool2d_forward(PyObject *self, PyObject *args) {
    uintptr_t px, py;
    idx p0, p1;
    pool_shape ps;
    if (!PyArg_ParseTuple(args, "KKnnnnnnnnnnnnnn", &px, &py, &p0, &p1, &ps.h, &ps.w, &ps.ho,
                          &ps.wo, &ps.kh, &ps.kw, &ps.sh, &ps.sw, &ps.ph, &ps.pw, &ps.dh,
                          &ps.dw))
        return NULL;
    const float *x = (const float *)px;
    float *y = (float *)py;
    Py_BEGIN_ALLOW_THREADS
    for (idx p = p0; p < p1; p++) {
        const float *xp = x + p * ps.h * ps.w;
        float *yp = y + p * ps.ho * ps.wo;
        if (pool2(&ps)) {
            for (idx i = 0; i < ps.ho; i++)
                pool2_row(xp + 2 * i * ps.w, xp + (2 * i + 1) * ps.w, yp + i * ps.wo, ps.wo);
            continue;
        }
        for (idx i = 0; i < ps.ho; i++) {
            float *yr = yp + i * ps.wo;
            for (idx j = 0; j < ps.wo; j++) yr[j] = -INFINITY;
            for (idx a = 0; a < ps.kh; a++) {
                idx r = i * ps.sh - ps.ph + a * ps.dh;
                if (r < 0 || r >= ps.h) continue;
                for (idx b = 0; b < ps.kw; b++) {
                    idx off = b * ps.dw, lo, hi;
                    pool_cols(&ps, off, &lo, &hi);
                    pool_row_max(xp + r * ps.w, yr, lo, hi, ps.sw, off - ps.pw);
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

WIDE static void pool_row_grad(const float *restrict xr, const float *restrict yr,
                               const float *restrict gr, float *restrict gxr,
                               float *restrict found, idx lo, idx hi, idx sw, idx c0) {
    for (idx j = lo; j < hi; j++) {
        float v = xr[j * sw + c0], m = yr[j];
        float won = ((v == m || (v != v && m != m)) && found[j] == 0.0f) ? 1.0f : 0.0f;
        found[j] = found[j] + won;
        gxr[j * sw + c0] += gr[j] * won;
    }
}

/* gx (zeroed by the caller) += the gradient of the planes [p0, p1); found: wo floats */
static PyObject *max_pool2d_grad(PyObject *self, PyObject *args) {
    uintptr_t px, py, pg, pgx, pfound;
    idx p0, p1;
    pool_shape ps;
    if (!PyArg_ParseTuple(args, "KKKKKnnnnnnnnnnnnnn", &px, &py, &pg, &pgx, &pfound, &p0, &p1,
                          &ps.h, &ps.w, &ps.ho, &ps.wo, &ps.kh, &ps.kw, &ps.sh, &ps.sw,
                          &ps.ph, &ps.pw, &ps.dh, &ps.dw))
        return NULL;
    const float *x = (const float *)px, *y = (const float *)py, *g = (const float *)pg;
    float *gx = (float *)pgx, *found = (float *)pfound;
    Py_BEGIN_ALLOW_THREADS
    for (idx p = p0; p < p1; p++) {
        const float *xp = x + p * ps.h * ps.w;
        const float *yp = y + p * ps.ho * ps.wo, *gp = g + p * ps.ho * ps.wo;
        float *gxp = gx + p * ps.h * ps.w;
        for (idx i = 0; i < ps.ho; i++) {
            for (idx j = 0; j < ps.wo; j++) found[j] = 0.0f;
            for (idx a = 0; a < ps.kh; a++) {
                idx r = i * ps.sh - ps.ph + a * ps.dh;
                if (r < 0 || r >= ps.h) continue;
                for (idx b = 0; b < ps.kw; b++) {
                    idx off = b * ps.dw, lo, hi;
                    pool_cols(&ps, off, &lo, &hi);
                    pool_row_grad(xp + r * ps.w, yp + i * ps.wo, gp + i * ps.wo,
                                  gxp + r * ps.w, found, lo, hi, ps.sw, off - ps.pw);
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* -- implicit-product convolutions ------------------------------------------------------
 * A sample (C, *spatial) is placed in a zero-bordered (C, plane) buffer by rows: row r of
 * a channel (``in_len`` values) goes to ``in_dst[r]`` of its plane. The output positions
 * of the flat layout are ``out_rows`` runs of ``out_len`` at ``out_src[r]`` of a
 * (O, width) row. */

typedef struct {
    const float *x;
    idx c, plane, in_rows, in_len, sample;
    const int64_t *in_dst;
    float *buf; /* NULL: the sample itself is the padded layout */
} placing;

static const float *place(const placing *pl, idx s) {
    const float *src = pl->x + s * pl->sample;
    if (!pl->buf) return src;
    for (idx ch = 0; ch < pl->c; ch++) {
        const float *from = src + ch * pl->in_rows * pl->in_len;
        float *to = pl->buf + ch * pl->plane;
        for (idx r = 0; r < pl->in_rows; r++)
            memcpy(to + pl->in_dst[r], from + r * pl->in_len, (size_t)pl->in_len * 4);
    }
    return pl->buf;
}

/* kw copies of each channel's plane of a placed sample, copy b starting b * dw further on:
 * rows (channel, b) at a plane's stride, the last kernel axis folded into one operand. The
 * tail of copy b (its last b * dw) is never read: a product reads at most lead + width - 1
 * of a row, within the plane less the kernel's reach. */
static void fold_copies(const float *pbv, float *xk, idx c, idx kw, idx dw, idx plane) {
    for (idx ch = 0; ch < c; ch++)
        for (idx b = 0; b < kw; b++)
            memcpy(xk + (ch * kw + b) * plane, pbv + ch * plane + b * dw,
                   (size_t)(plane - b * dw) * 4);
}

/* The forward of samples: per kernel offset, the filters' slice times the shifted sample,
 * summed where MKL writes them. With pxk (not 0) the last kernel axis is folded in
 * (fold_copies): offsets are those of the leading kernel axes and wk is (nl, O, C * kw).
 * Split over samples, part p works in its own p-th buffer of pbuf, pacc and pxk. */
typedef struct {
    sgemm_t gemm;
    placing pl;
    const float *wk, *b, *gy;
    const int64_t *offsets, *out_src;
    float *acc, *y, *xk, *spread, *fold, *gwk;
    idx o, width, kk, out_rows, out_len, kw, dw;
} conv_args;

static void conv_forward_body(const void *args, idx s0, idx s1, int part) {
    const conv_args *A = (const conv_args *)args;
    placing pl = A->pl;
    idx c = pl.c, plane = pl.plane, o = A->o, width = A->width;
    if (pl.buf) pl.buf += part * c * plane;
    float *acc = A->acc + part * o * width;
    float *xk = A->xk ? A->xk + part * c * A->kw * plane : NULL;
    const float *wk = A->wk, *b = A->b;
    idx out_rows = A->out_rows, out_len = A->out_len;
    idx out_sample = o * out_rows * out_len, k = xk ? c * A->kw : c;
    for (idx s = s0; s < s1; s++) {
        const float *src = place(&pl, s);
        if (xk) {
            fold_copies(src, xk, c, A->kw, A->dw, plane);
            src = xk;
        }
        for (idx q = 0; q < A->kk; q++)
            A->gemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)o, (int)width, (int)k, 1.0f,
                    wk + q * o * k, (int)k, src + A->offsets[q], (int)plane,
                    q ? 1.0f : 0.0f, acc, (int)width);
        float *ys = A->y + s * out_sample;
        for (idx ch = 0; ch < o; ch++) {
            const float *row = acc + ch * width;
            float bias = b ? b[ch] : 0.0f;
            for (idx r = 0; r < out_rows; r++) {
                const float *from = row + A->out_src[r];
                float *to = ys + (ch * out_rows + r) * out_len;
                if (b)
                    for (idx i = 0; i < out_len; i++) to[i] = from[i] + bias;
                else
                    memcpy(to, from, (size_t)out_len * 4);
            }
        }
    }
}

static PyObject *conv_implicit_forward(PyObject *self, PyObject *args) {
    uintptr_t pgemm, px, pin_dst, pbuf, pwk, poffsets, pacc, pout_src, py, pb, pxk;
    idx n, c, plane, in_rows, in_len;
    conv_args a = {0};
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKnnnnnKKKnnKnKnnKKKKnn|i", &pgemm, &px, &n, &c, &plane,
                          &in_rows, &in_len, &pin_dst, &pbuf, &pwk, &a.o, &a.width, &poffsets,
                          &a.kk, &pacc, &a.out_rows, &a.out_len, &pout_src, &py, &pb, &pxk,
                          &a.kw, &a.dw, &nparts))
        return NULL;
    a.gemm = (sgemm_t)pgemm;
    placing pl = {(const float *)px, c, plane, in_rows, in_len, c * in_rows * in_len,
                  (const int64_t *)pin_dst, (float *)pbuf};
    a.pl = pl;
    a.wk = (const float *)pwk, a.b = (const float *)pb;
    a.offsets = (const int64_t *)poffsets, a.out_src = (const int64_t *)pout_src;
    a.acc = (float *)pacc, a.y = (float *)py, a.xk = (float *)pxk;
    Py_BEGIN_ALLOW_THREADS
    run_range(conv_forward_body, &a, 0, n, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* The weight gradient of samples, added into gwk (nl * kw, O, C): per sample and kernel
 * offset, the gradient spread over the flat layout times the shifted sample. The last
 * kernel axis is folded into the products (fold_copies), so one product per offset of the
 * leading kernel axes has C * kw columns instead of C (at ResNet's 64 channels 135 against
 * 115 GFLOP/s). Results gather in fold (nl, O, C, kw), zeroed by the caller, then go to
 * gwk. With kw = 1 the sample itself is the operand (pxk 0) and fold is gwk. Split over
 * samples, part p works in its own p-th buffer of pbuf, pspread, pxk, pfold and pgwk (the
 * caller sums the parts' gwk). */
static void conv_weight_grad_body(const void *args, idx s0, idx s1, int part) {
    const conv_args *A = (const conv_args *)args;
    placing pl = A->pl;
    idx c = pl.c, plane = pl.plane, o = A->o, width = A->width, kw = A->kw, nl = A->kk;
    idx ck = c * kw, out_rows = A->out_rows, out_len = A->out_len;
    idx out_sample = o * out_rows * out_len;
    if (pl.buf) pl.buf += part * c * plane;
    float *spread = A->spread + part * o * width;
    float *xk = A->xk ? A->xk + part * ck * plane : NULL;
    float *gwk = A->gwk + part * nl * kw * o * c;
    float *fold = A->fold == A->gwk ? gwk : A->fold + part * nl * o * ck;
    for (idx s = s0; s < s1; s++) {
        const float *pbv = place(&pl, s);
        const float *gs = A->gy + s * out_sample;
        for (idx ch = 0; ch < o; ch++)
            for (idx r = 0; r < out_rows; r++)
                memcpy(spread + ch * width + A->out_src[r],
                       gs + (ch * out_rows + r) * out_len, (size_t)out_len * 4);
        if (xk) fold_copies(pbv, xk, c, kw, A->dw, plane);
        const float *src = xk ? xk : pbv;
        for (idx q = 0; q < nl; q++)
            A->gemm(ROW_MAJOR, NO_TRANS, TRANS, (int)o, (int)ck, (int)width, 1.0f, spread,
                    (int)width, src + A->offsets[q], (int)plane, 1.0f, fold + q * o * ck,
                    (int)ck);
    }
    if (fold != gwk)
        for (idx q = 0; q < nl; q++)
            for (idx b = 0; b < kw; b++)
                for (idx oo = 0; oo < o; oo++)
                    for (idx ch = 0; ch < c; ch++)
                        gwk[((q * kw + b) * o + oo) * c + ch] =
                            fold[(q * o + oo) * ck + ch * kw + b];
}

static PyObject *conv_implicit_weight_grad(PyObject *self, PyObject *args) {
    uintptr_t pgemm, px, pin_dst, pbuf, pgy, pspread, plead, pout_src, pxk, pfold, pgwk;
    idx n, c, plane, in_rows, in_len;
    conv_args a = {0};
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKnnnnnKKKnnKKnnnnnKKKK|i", &pgemm, &px, &n, &c, &plane,
                          &in_rows, &in_len, &pin_dst, &pbuf, &pgy, &a.o, &a.width, &pspread,
                          &plead, &a.kk, &a.kw, &a.dw, &a.out_rows, &a.out_len, &pout_src,
                          &pxk, &pfold, &pgwk, &nparts))
        return NULL;
    a.gemm = (sgemm_t)pgemm;
    placing pl = {(const float *)px, c, plane, in_rows, in_len, c * in_rows * in_len,
                  (const int64_t *)pin_dst, (float *)pbuf};
    a.pl = pl;
    a.gy = (const float *)pgy;
    a.offsets = (const int64_t *)plead, a.out_src = (const int64_t *)pout_src;
    a.spread = (float *)pspread, a.xk = (float *)pxk, a.fold = (float *)pfold;
    a.gwk = (float *)pgwk;
    Py_BEGIN_ALLOW_THREADS
    run_range(conv_weight_grad_body, &a, 0, n, nparts, 1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* -- Winograd F(2x2, 3x3): 3x3 convolutions at stride 1 ---------------------------------
 * Each 2x2 tile of the output comes from a 4x4 tile of the input as A' [U (.) V] A, with
 * V = B' d B the input tile transformed, U = G g G' each filter transformed (both 4x4, 16
 * values ``xi``) and (.) a sum over input channels: per xi one GEMM of (O, C) by (C, T)
 * over T tiles, 16 of them with 4 * 4 multiply-adds per output tile and channel pair
 * where the direct convolution has 9 * 4 (2.25 times fewer). The transforms are additions
 * and halvings only (exact in binary but for rounding). Tiles are taken ``spb`` samples
 * at a time (a block, whose V and M stay in cache); input rows and columns outside the
 * image are zeros, output positions past its edge (odd sizes) are dropped. The weight
 * gradient is the transpose: dU = sum over tiles of (A dY A') V', summed per part in its
 * own (16, O, C) and then taken back through G' dU G. */

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define WIDE512 __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define WIDE512
#endif

/* the distance of V's (and M's) 16 matrices of n values: past n to a whole 4 KiB and 64
 * bytes on, so the transforms' 16 streams of stores fall in different sets of the cache
 * (a multiple of 4 KiB apart, at 24 x 24 outputs, they took 3 to 4 times as long) */
static idx wino_pitch(idx n) { return (n + 1023) / 1024 * 1024 + 16; }

typedef struct {
    sgemm_t gemm;
    const float *x, *u, *b, *gy;
    float *y, *scratch, *du;
    idx n, c, h, w, o, oh, ow, plo, qlo, th, tw, spb, per_part;
    uint32_t *bad; /* per part: an infinity or NaN met (see wino_nonfinite) */
} wino_args;

/* nonzero where one of p[0 .. n) is an infinity or NaN (its exponent all ones): the
 * transforms would spread it over a tile (inf - inf, or NaN times a zero coefficient)
 * where the direct sums keep it to the outputs it reaches, so such operands decline */
static inline uint32_t wino_nonfinite(const float *restrict p, idx n) {
    uint32_t any = 0;
    for (idx i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, p + i, 4);
        any |= (u & 0x7f800000u) + 0x00800000u;
    }
    return any & 0x80000000u;
}

/* the even and odd columns (e, od: pc each) of a row of w values placed at column qlo of
 * a zero-bordered row */
static inline void wino_split(const float *restrict row, idx w, idx qlo, float *restrict e,
                              float *restrict od, idx pc) {
    idx lo = (qlo + 1) / 2, hi = (w + qlo) / 2; /* k with both 2k and 2k + 1 in the row */
    if (hi > pc) hi = pc;
    if (hi < lo) hi = lo;
    for (idx k = 0; k < pc && k < lo; k++) {
        idx a = 2 * k - qlo;
        e[k] = a >= 0 && a < w ? row[a] : 0.0f;
        od[k] = a + 1 >= 0 && a + 1 < w ? row[a + 1] : 0.0f;
    }
    const float *b = row + (2 * lo - qlo);
    for (idx i = 0; i < hi - lo; i++) {
        e[lo + i] = b[2 * i];
        od[lo + i] = b[2 * i + 1];
    }
    for (idx k = hi; k < pc; k++) {
        idx a = 2 * k - qlo;
        e[k] = a >= 0 && a < w ? row[a] : 0.0f;
        od[k] = a + 1 >= 0 && a + 1 < w ? row[a + 1] : 0.0f;
    }
}

/* one tile row: V's 16 rows (a stride of ``ct`` apart) from the even and odd columns of
 * four rows of the bordered plane; B' d B, rows (d0 - d2, d1 + d2, d2 - d1, d1 - d3),
 * then the columns likewise */
static inline void wino_input_row(const float *restrict e0, const float *restrict o0,
                                  const float *restrict e1, const float *restrict o1,
                                  const float *restrict e2, const float *restrict o2,
                                  const float *restrict e3, const float *restrict o3,
                                  float *restrict v, idx ct, idx tw) {
#define WINO_COLS(e, od, k, c0, c1, c2, c3)                        \
    float c0 = e[k] - e[k + 1], c1 = od[k] + e[k + 1];             \
    float c2 = e[k + 1] - od[k], c3 = od[k] - od[k + 1];
    float *v0 = v, *v1 = v + ct, *v2 = v + 2 * ct, *v3 = v + 3 * ct, *v4 = v + 4 * ct;
    float *v5 = v + 5 * ct, *v6 = v + 6 * ct, *v7 = v + 7 * ct, *v8 = v + 8 * ct;
    float *v9 = v + 9 * ct, *v10 = v + 10 * ct, *v11 = v + 11 * ct, *v12 = v + 12 * ct;
    float *v13 = v + 13 * ct, *v14 = v + 14 * ct, *v15 = v + 15 * ct;
#pragma GCC ivdep /* the 16 rows do not overlap */
    for (idx k = 0; k < tw; k++) {
        /* each row's (d0 - d2, d1 + d2, d2 - d1, d1 - d3), d = (e[k], o[k], e[k+1], o[k+1]) */
        WINO_COLS(e0, o0, k, a0, a1, a2, a3)
        WINO_COLS(e1, o1, k, b0, b1, b2, b3)
        WINO_COLS(e2, o2, k, c0, c1, c2, c3)
        WINO_COLS(e3, o3, k, d0, d1, d2, d3)
        /* then down the columns: (r0 - r2, r1 + r2, r2 - r1, r1 - r3) */
        v0[k] = a0 - c0, v1[k] = a1 - c1, v2[k] = a2 - c2, v3[k] = a3 - c3;
        v4[k] = b0 + c0, v5[k] = b1 + c1, v6[k] = b2 + c2, v7[k] = b3 + c3;
        v8[k] = c0 - b0, v9[k] = c1 - b1, v10[k] = c2 - b2, v11[k] = c3 - b3;
        v12[k] = b0 - d0, v13[k] = b1 - d1, v14[k] = b2 - d2, v15[k] = b3 - d3;
    }
#undef WINO_COLS
}

/* V (16, C, T) of samples [s0, s1): each plane first split into the even and odd columns
 * of its zero-bordered rows (eo: 2 * (2 th + 2) rows of tw + 1), so the columns of a run of
 * tiles are runs */
WIDE512 static uint32_t wino_input(const wino_args *A, idx s0, idx s1, float *v,
                                   float *eo) {
    idx c = A->c, h = A->h, w = A->w, th = A->th, tw = A->tw, pr = 2 * th + 2, pc = tw + 1;
    idx t_n = (s1 - s0) * th * tw, ct = wino_pitch(c * t_n);
    float *E = eo, *O = eo + pr * pc;
    for (idx ch = 0; ch < c; ch++)
        for (idx s = s0; s < s1; s++) {
            const float *p = A->x + (s * c + ch) * h * w;
            for (idx r = 0; r < pr; r++) {
                idx xr = r - A->plo;
                if (xr < 0 || xr >= h) {
                    memset(E + r * pc, 0, (size_t)pc * 4);
                    memset(O + r * pc, 0, (size_t)pc * 4);
                } else {
                    wino_split(p + xr * w, w, A->qlo, E + r * pc, O + r * pc, pc);
                }
            }
            if (wino_nonfinite(E, 2 * pr * pc)) return 1; /* E and O, one after the other */
            float *vt = v + ch * t_n + (s - s0) * th * tw;
            for (idx tr = 0; tr < th; tr++) {
                idx r = 2 * tr * pc;
                wino_input_row(E + r, O + r, E + r + pc, O + r + pc, E + r + 2 * pc,
                               O + r + 2 * pc, E + r + 3 * pc, O + r + 3 * pc, vt + tr * tw,
                               ct, tw);
            }
        }
    return 0;
}

/* one tile row of y: rows y0, y1 (2 tw each) from M's 16 rows a stride ``ot`` apart;
 * A' m A, rows (m0 + m1 + m2, m1 - m2 - m3), then the columns likewise, plus the bias */
static inline void wino_output_row(const float *restrict m, idx ot, float bias,
                                   float *restrict y0, float *restrict y1, idx tw) {
#pragma GCC ivdep
    for (idx k = 0; k < tw; k++) {
        float f[4][2];
        for (int i = 0; i < 4; i++) {
            float m0 = m[(4 * i + 0) * ot + k], m1 = m[(4 * i + 1) * ot + k];
            float m2 = m[(4 * i + 2) * ot + k], m3 = m[(4 * i + 3) * ot + k];
            f[i][0] = m0 + m1 + m2, f[i][1] = m1 - m2 - m3;
        }
        for (int j = 0; j < 2; j++) {
            y0[2 * k + j] = f[0][j] + f[1][j] + f[2][j] + bias;
            y1[2 * k + j] = f[1][j] - f[2][j] - f[3][j] + bias;
        }
    }
}

/* y of samples [s0, s1) from M (16, O, T); rows past the edge go through q (2 rows of
 * 2 tw) */
WIDE512 static uint32_t wino_output(const wino_args *A, idx s0, idx s1, const float *m,
                                    float *q) {
    idx o = A->o, oh = A->oh, ow = A->ow, th = A->th, tw = A->tw;
    idx t_n = (s1 - s0) * th * tw, ot = wino_pitch(o * t_n);
    for (idx oc = 0; oc < o; oc++) {
        float bias = A->b ? A->b[oc] : 0.0f;
        for (idx s = s0; s < s1; s++) {
            for (idx tr = 0; tr < th; tr++) {
                const float *mt = m + oc * t_n + ((s - s0) * th + tr) * tw;
                float *ys = A->y + (s * o + oc) * oh * ow + 2 * tr * ow;
                int whole = 2 * tw == ow && 2 * tr + 1 < oh;
                wino_output_row(mt, ot, bias, whole ? ys : q, whole ? ys + ow : q + 2 * tw,
                                tw);
                if (whole) continue;
                memcpy(ys, q, (size_t)ow * 4);
                if (2 * tr + 1 < oh) memcpy(ys + ow, q + 2 * tw, (size_t)ow * 4);
            }
            /* From finite operands, a plane that is not finite overflowed inside the
             * transforms (an input tile's transform adds up to four inputs, a filter's
             * weighs a weight up to 2.25 times), where the direct sums may not have:
             * declined as such operands are. */
            if (wino_nonfinite(A->y + (s * o + oc) * oh * ow, oh * ow)) return 1;
        }
    }
    return 0;
}

/* one tile row of dM (16 rows a stride ``dt`` apart) from rows g0, g1 of gy (2 tw each);
 * A dY A', rows (a, a + b, a - b, -b) of each row's (a, b), then the columns likewise */
static inline void wino_grad_row(const float *restrict g0, const float *restrict g1,
                                 float *restrict dm, idx ot, idx tw) {
    float *d0 = dm, *d1 = dm + ot, *d2 = dm + 2 * ot, *d3 = dm + 3 * ot, *d4 = dm + 4 * ot;
    float *d5 = dm + 5 * ot, *d6 = dm + 6 * ot, *d7 = dm + 7 * ot, *d8 = dm + 8 * ot;
    float *d9 = dm + 9 * ot, *d10 = dm + 10 * ot, *d11 = dm + 11 * ot, *d12 = dm + 12 * ot;
    float *d13 = dm + 13 * ot, *d14 = dm + 14 * ot, *d15 = dm + 15 * ot;
#pragma GCC ivdep /* the 16 rows do not overlap */
    for (idx k = 0; k < tw; k++) {
        float a0 = g0[2 * k], b0 = g0[2 * k + 1], a1 = g1[2 * k], b1 = g1[2 * k + 1];
        float p0 = a0, p1 = a0 + b0, p2 = a0 - b0, p3 = -b0;
        float q0 = a1, q1 = a1 + b1, q2 = a1 - b1, q3 = -b1;
        d0[k] = p0, d1[k] = p1, d2[k] = p2, d3[k] = p3;
        d4[k] = p0 + q0, d5[k] = p1 + q1, d6[k] = p2 + q2, d7[k] = p3 + q3;
        d8[k] = p0 - q0, d9[k] = p1 - q1, d10[k] = p2 - q2, d11[k] = p3 - q3;
        d12[k] = -q0, d13[k] = -q1, d14[k] = -q2, d15[k] = -q3;
    }
}

/* dM (16, O, T) of samples [s0, s1) from gy; rows past the edge come through q (2 rows of
 * 2 tw, zero beyond it) */
WIDE512 static uint32_t wino_grad_output(const wino_args *A, idx s0, idx s1, float *dm,
                                         float *q) {
    idx o = A->o, oh = A->oh, ow = A->ow, th = A->th, tw = A->tw;
    idx t_n = (s1 - s0) * th * tw, ot = wino_pitch(o * t_n);
    for (idx oc = 0; oc < o; oc++)
        for (idx s = s0; s < s1; s++) {
            if (wino_nonfinite(A->gy + (s * o + oc) * oh * ow, oh * ow)) return 1;
            for (idx tr = 0; tr < th; tr++) {
                const float *gs = A->gy + (s * o + oc) * oh * ow + 2 * tr * ow;
                float *dt = dm + oc * t_n + ((s - s0) * th + tr) * tw;
                if (2 * tw == ow && 2 * tr + 1 < oh) {
                    wino_grad_row(gs, gs + ow, dt, ot, tw);
                    continue;
                }
                memset(q, 0, (size_t)(4 * tw) * 4);
                memcpy(q, gs, (size_t)ow * 4);
                if (2 * tr + 1 < oh) memcpy(q + 2 * tw, gs + ow, (size_t)ow * 4);
                wino_grad_row(q, q + 2 * tw, dt, ot, tw);
            }
        }
    return 0;
}

/* the part's scratch: V (16, C, T), M (16, O, T), then the split rows */
static float *wino_scratch(const wino_args *A, int part) {
    return A->scratch + part * A->per_part;
}

static void wino_forward_body(const void *args, idx b0, idx b1, int part) {
    const wino_args *A = (const wino_args *)args;
    idx c = A->c, o = A->o, t_max = A->spb * A->th * A->tw;
    float *v = wino_scratch(A, part), *m = v + 16 * wino_pitch(c * t_max);
    float *rb = m + 16 * wino_pitch(o * t_max);
    for (idx s0 = b0; s0 < b1; s0 += A->spb) {
        idx s1 = s0 + A->spb < b1 ? s0 + A->spb : b1, t_n = (s1 - s0) * A->th * A->tw;
        if (wino_input(A, s0, s1, v, rb)) {
            A->bad[part] = 1;
            return;
        }
        for (int xi = 0; xi < 16; xi++)
            A->gemm(ROW_MAJOR, NO_TRANS, NO_TRANS, (int)o, (int)t_n, (int)c, 1.0f,
                    A->u + xi * o * c, (int)c, v + xi * wino_pitch(c * t_n), (int)t_n, 0.0f,
                    m + xi * wino_pitch(o * t_n), (int)t_n);
        if (wino_output(A, s0, s1, m, rb)) {
            A->bad[part] = 1;
            return;
        }
    }
}

static void wino_weight_grad_body(const void *args, idx b0, idx b1, int part) {
    const wino_args *A = (const wino_args *)args;
    idx c = A->c, o = A->o, t_max = A->spb * A->th * A->tw;
    float *v = wino_scratch(A, part), *m = v + 16 * wino_pitch(c * t_max);
    float *rb = m + 16 * wino_pitch(o * t_max);
    float *du = A->du + part * 16 * o * c;
    for (idx s0 = b0; s0 < b1; s0 += A->spb) {
        idx s1 = s0 + A->spb < b1 ? s0 + A->spb : b1, t_n = (s1 - s0) * A->th * A->tw;
        if (wino_input(A, s0, s1, v, rb) || wino_grad_output(A, s0, s1, m, rb)) {
            A->bad[part] = 1;
            return;
        }
        for (int xi = 0; xi < 16; xi++)
            A->gemm(ROW_MAJOR, NO_TRANS, TRANS, (int)o, (int)c, (int)t_n, 1.0f,
                    m + xi * wino_pitch(o * t_n), (int)t_n, v + xi * wino_pitch(c * t_n),
                    (int)t_n, 1.0f,
                    du + xi * o * c, (int)c);
    }
}

/* U (16, O, C) = G g G' of w (O, C, 3, 3), G = (1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1) */
static void wino_filters(const float *w, float *u, idx o, idx c) {
    idx oc = o * c;
    for (idx i = 0; i < oc; i++) {
        const float *g = w + 9 * i;
        float t[4][3];
        for (int b = 0; b < 3; b++) {
            float g0 = g[b], g1 = g[3 + b], g2 = g[6 + b];
            t[0][b] = g0, t[1][b] = (g0 + g1 + g2) * 0.5f;
            t[2][b] = (g0 - g1 + g2) * 0.5f, t[3][b] = g2;
        }
        for (int a = 0; a < 4; a++) {
            float g0 = t[a][0], g1 = t[a][1], g2 = t[a][2];
            u[(a * 4 + 0) * oc + i] = g0;
            u[(a * 4 + 1) * oc + i] = (g0 + g1 + g2) * 0.5f;
            u[(a * 4 + 2) * oc + i] = (g0 - g1 + g2) * 0.5f;
            u[(a * 4 + 3) * oc + i] = g2;
        }
    }
}

/* gw (O, C, 3, 3) = G' dU G of dU (16, O, C) */
static void wino_filters_back(const float *du, float *gw, idx o, idx c) {
    idx oc = o * c;
    for (idx i = 0; i < oc; i++) {
        float t[4][3];
        for (int a = 0; a < 4; a++) {
            float d0 = du[(a * 4 + 0) * oc + i], d1 = du[(a * 4 + 1) * oc + i];
            float d2 = du[(a * 4 + 2) * oc + i], d3 = du[(a * 4 + 3) * oc + i];
            t[a][0] = d0 + (d1 + d2) * 0.5f;
            t[a][1] = (d1 - d2) * 0.5f;
            t[a][2] = (d1 + d2) * 0.5f + d3;
        }
        float *g = gw + 9 * i;
        for (int b = 0; b < 3; b++) {
            float d0 = t[0][b], d1 = t[1][b], d2 = t[2][b], d3 = t[3][b];
            g[b] = d0 + (d1 + d2) * 0.5f;
            g[3 + b] = (d1 - d2) * 0.5f;
            g[6 + b] = (d1 + d2) * 0.5f + d3;
        }
    }
}

/* the shapes' arguments, common to both; the scratch (per part: V, M and rows) is allocated
 * here, 64-byte aligned */
static int wino_setup(wino_args *a, uintptr_t pgemm, uintptr_t px, int nparts) {
    a->gemm = (sgemm_t)pgemm;
    a->x = (const float *)px;
    a->th = (a->oh + 1) / 2, a->tw = (a->ow + 1) / 2;
    if (a->spb < 1) a->spb = 1;
    idx t_max = a->spb * a->th * a->tw;
    idx per = 16 * (wino_pitch(a->c * t_max) + wino_pitch(a->o * t_max)) +
              2 * (2 * a->th + 2) * (a->tw + 1);
    a->per_part = (per + 15) / 16 * 16;
    a->scratch = aligned_alloc(64, (size_t)(nparts * a->per_part) * 4);
    a->bad = calloc((size_t)nparts, sizeof(uint32_t));
    if (!a->scratch || !a->bad) {
        free(a->scratch);
        free(a->bad);
        PyErr_NoMemory();
        return 0;
    }
    return 1;
}

/* whether a part met an infinity or NaN; frees the scratch */
static int wino_finish(wino_args *a, int nparts) {
    uint32_t bad = 0;
    for (int p = 0; p < nparts; p++) bad |= a->bad[p];
    free(a->bad);
    free(a->scratch);
    return bad != 0;
}

static PyObject *conv_winograd_forward(PyObject *self, PyObject *args) {
    uintptr_t pgemm, px, pw, pb, py;
    wino_args a = {0};
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKnnnnnnnnnnKKK|i", &pgemm, &px, &a.n, &a.c, &a.h, &a.w,
                          &a.o, &a.oh, &a.ow, &a.plo, &a.qlo, &a.spb, &pw, &pb, &py, &nparts))
        return NULL;
    if (nparts < 1) nparts = 1;
    if (wino_nonfinite((const float *)pw, a.o * a.c * 9)) Py_RETURN_FALSE;
    if (!wino_setup(&a, pgemm, px, nparts)) return NULL;
    float *u = malloc((size_t)(16 * a.o * a.c) * 4);
    if (!u) {
        wino_finish(&a, nparts);
        return PyErr_NoMemory();
    }
    a.b = (const float *)pb, a.y = (float *)py, a.u = u;
    Py_BEGIN_ALLOW_THREADS
    wino_filters((const float *)pw, u, a.o, a.c);
    run_range(wino_forward_body, &a, 0, a.n, nparts, a.spb);
    Py_END_ALLOW_THREADS
    free(u);
    return PyBool_FromLong(!wino_finish(&a, nparts));
}

static PyObject *conv_winograd_weight_grad(PyObject *self, PyObject *args) {
    uintptr_t pgemm, px, pgy, pgw;
    wino_args a = {0};
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKnnnnnnnnnnKK|i", &pgemm, &px, &a.n, &a.c, &a.h, &a.w,
                          &a.o, &a.oh, &a.ow, &a.plo, &a.qlo, &a.spb, &pgy, &pgw, &nparts))
        return NULL;
    if (nparts < 1) nparts = 1;
    if (!wino_setup(&a, pgemm, px, nparts)) return NULL;
    idx each = 16 * a.o * a.c;
    float *du = calloc((size_t)(nparts * each), 4);
    if (!du) {
        wino_finish(&a, nparts);
        return PyErr_NoMemory();
    }
    a.gy = (const float *)pgy, a.du = du;
    uint32_t over;
    Py_BEGIN_ALLOW_THREADS
    run_range(wino_weight_grad_body, &a, 0, a.n, nparts, a.spb);
    for (int p = 1; p < nparts; p++) /* the parts' sums in order */
        for (idx i = 0; i < each; i++) du[i] += du[p * each + i];
    wino_filters_back(du, (float *)pgw, a.o, a.c);
    /* overflow inside the transforms, as in wino_output */
    over = wino_nonfinite((const float *)pgw, a.o * a.c * 9);
    Py_END_ALLOW_THREADS
    free(du);
    return PyBool_FromLong(!wino_finish(&a, nparts) && !over);
}

/* -- Adam over elements [n0, n1): the default's float32 operations in its order, each
 * element read and written once ------------------------------------------------------ */

WIDE static void run_adam(float *restrict p, const float *restrict g, float *restrict m,
                          float *restrict v, idx n, float b1, float c1, float b2, float c2,
                          float eps, float step, float decay, int decays) {
    for (idx i = 0; i < n; i++) {
        float mi = m[i] * b1;
        mi = mi + g[i] * c1;
        float gg = g[i] * g[i];
        float vi = v[i] * b2;
        vi = vi + gg * c2;
        float t = sqrtf(vi);
        t = t + eps;
        t = mi / t;
        float pi = decays ? p[i] * decay : p[i];
        t = t * step;
        p[i] = pi - t;
        m[i] = mi;
        v[i] = vi;
    }
}

typedef struct {
    float *p, *m, *v;
    const float *g;
    double b1, c1, b2, c2, eps, step, decay;
} adam_args;

static void adam_body(const void *args, idx n0, idx n1, int part) {
    const adam_args *A = (const adam_args *)args;
    run_adam(A->p + n0, A->g + n0, A->m + n0, A->v + n0, n1 - n0, (float)A->b1, (float)A->c1,
             (float)A->b2, (float)A->c2, (float)A->eps, (float)A->step, (float)A->decay,
             A->decay != 1.0);
}

static PyObject *adam(PyObject *self, PyObject *args) {
    uintptr_t pp, pg, pm, pv;
    adam_args a;
    idx n0, n1, align = 1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKKnnddddddd|in", &pp, &pg, &pm, &pv, &n0, &n1, &a.b1, &a.c1,
                          &a.b2, &a.c2, &a.eps, &a.step, &a.decay, &nparts, &align))
        return NULL;
    a.p = (float *)pp, a.g = (const float *)pg, a.m = (float *)pm, a.v = (float *)pv;
    Py_BEGIN_ALLOW_THREADS
    run_range(adam_body, &a, n0, n1, nparts, align);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* -- GELU and its slope over elements [n0, n1), chunks of CHUNK in cache between MKL's
 * vector erf (and exp) and the arithmetic around them: the NumPy blocks' operations in
 * their order ------------------------------------------------------------------------- */

#define CHUNK 2048

WIDE static void run_scale_into(const float *restrict x, float *restrict y, idx n, float a) {
    for (idx i = 0; i < n; i++) y[i] = x[i] * a;
}

WIDE static void run_gelu_out(const float *restrict x, const float *restrict t,
                              float *restrict out, idx n) {
    for (idx i = 0; i < n; i++) {
        float u = t[i] + 1.0f;
        u = u * x[i];
        out[i] = u * 0.5f;
    }
}

WIDE static void run_square_half(const float *restrict x, float *restrict b, idx n) {
    for (idx i = 0; i < n; i++) {
        float u = x[i] * x[i];
        b[i] = u * -0.5f;
    }
}

WIDE static void run_slope_out(const float *restrict x, const float *restrict a,
                               const float *restrict b, const float *restrict gy,
                               float *restrict out, idx n, float inv) {
    for (idx i = 0; i < n; i++) {
        float phi = a[i] + 1.0f;
        phi = phi * 0.5f;
        float d = b[i] * x[i];
        d = d * inv;
        float r = phi + d;
        out[i] = gy ? r * gy[i] : r;
    }
}

typedef struct {
    const float *x, *gy;
    float *out;
    int slope;
    vml_t verf, vexp;
    long long mode;
    double sqrt_half, inv_sqrt_2pi;
} gelu_args;

static void gelu_body(const void *args, idx n0, idx n1, int part) {
    const gelu_args *A = (const gelu_args *)args;
    const float *x = A->x, *gy = A->gy;
    float *out = A->out;
    int slope = A->slope;
    vml_t verf = A->verf, vexp = A->vexp;
    long long mode = A->mode;
    double sqrt_half = A->sqrt_half, inv_sqrt_2pi = A->inv_sqrt_2pi;
    float a[CHUNK], b[CHUNK];
    for (idx s0 = n0; s0 < n1; s0 += CHUNK) {
        idx k = n1 - s0 < CHUNK ? n1 - s0 : CHUNK;
        run_scale_into(x + s0, a, k, (float)sqrt_half);
        verf((int)k, a, a, mode);
        if (!slope) {
            run_gelu_out(x + s0, a, out + s0, k);
            continue;
        }
        run_square_half(x + s0, b, k);
        vexp((int)k, b, b, mode);
        run_slope_out(x + s0, a, b, gy ? gy + s0 : NULL, out + s0, k, (float)inv_sqrt_2pi);
    }
}

static PyObject *gelu(PyObject *self, PyObject *args) {
    uintptr_t px, pgy, pout, perf, pexp;
    gelu_args a;
    idx n0, n1, align = 1;
    int nparts = 1;
    if (!PyArg_ParseTuple(args, "KKKnniKKLdd|in", &px, &pgy, &pout, &n0, &n1, &a.slope, &perf,
                          &pexp, &a.mode, &a.sqrt_half, &a.inv_sqrt_2pi, &nparts, &align))
        return NULL;
    a.x = (const float *)px, a.gy = (const float *)pgy, a.out = (float *)pout;
    a.verf = (vml_t)perf, a.vexp = (vml_t)pexp;
    Py_BEGIN_ALLOW_THREADS
    run_range(gelu_body, &a, n0, n1, nparts, align);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"gemm_parts", gemm_parts, METH_VARARGS, "A GEMM split over the pool's threads."},
    {"bn_forward", bn_forward, METH_VARARGS, "Batch-norm forward of channels [c0, c1)."},
    {"bn_backward", bn_backward, METH_VARARGS, "Batch-norm gradient of channels [c0, c1)."},
    {"ln_forward", ln_forward, METH_VARARGS, "Layer-norm forward of rows [r0, r1)."},
    {"ln_backward", ln_backward, METH_VARARGS, "Layer-norm gradient of rows [r0, r1)."},
    {"relu_grad", relu_grad, METH_VARARGS, "ReLU's gradient from its output."},
    {"adam", adam, METH_VARARGS, "One Adam step over a range of elements."},
    {"gelu", gelu, METH_VARARGS, "GELU or its slope over a range of elements."},
    {"attention_forward", attention_forward, METH_VARARGS, "Attention of batch items."},
    {"attention_backward", attention_backward, METH_VARARGS, "Attention's gradients."},
    {"softmax_xent_rows", softmax_xent_rows, METH_VARARGS, "Softmax-CE forward of rows."},
    {"softmax_xent_grad_rows", softmax_xent_grad_rows, METH_VARARGS,
     "Softmax-CE gradient of rows."},
    {"softmax_xent_grad_x_rows", softmax_xent_grad_x_rows, METH_VARARGS,
     "Softmax-CE gradient of rows, from the logits."},
    {"max_pool2d_forward", max_pool2d_forward, METH_VARARGS, "2-d max pooling of planes."},
    {"max_pool2d_grad", max_pool2d_grad, METH_VARARGS, "2-d max pooling's gradient."},
    {"conv_implicit_forward", conv_implicit_forward, METH_VARARGS,
     "Implicit-product convolution of samples."},
    {"conv_implicit_weight_grad", conv_implicit_weight_grad, METH_VARARGS,
     "Implicit-product weight gradient of samples, the last kernel axis folded in."},
    {"conv_winograd_forward", conv_winograd_forward, METH_VARARGS,
     "Winograd F(2x2, 3x3) convolution of samples; False where an operand is not finite."},
    {"conv_winograd_weight_grad", conv_winograd_weight_grad, METH_VARARGS,
     "Winograd F(2x2, 3x3) weight gradient; False where an operand is not finite."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cnative",
                                    "portagrad's compiled float32 kernels.", -1, methods};

PyMODINIT_FUNC PyInit__cnative(void) { return PyModule_Create(&module); }

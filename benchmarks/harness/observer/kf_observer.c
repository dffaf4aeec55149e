/* kernforge launch observer: a CUPTI callback library the CUDA driver loads into a candidate's
 * worker (CUDA_INJECTION64_PATH) when the worker initialises CUDA, before any candidate code is
 * imported. It counts every kernel launch of the process by CUfunction, remembers for each
 * function which shared object launched it first (Triton's generated launcher, libtorch,
 * cuBLAS, ...), and at every launch of the worker's marker kernel writes the counts since the
 * previous marker to a pipe whose read end the judge holds. Each line carries a sequence number
 * and a SipHash-2-4 tag keyed by 16 bytes the judge wrote to another pipe, read here once at
 * start-up and closed, so lines written by anything else in the process cannot pass as ours.
 *
 * What it is not: a wall against native code in the same process (a library that reads our
 * memory or unsubscribes us could); the judge checks what it expects to see (the markers, the
 * worker's own launches) so that silencing us shows as missing lines. benchmarks/harness/
 * observer/__init__.py is the judge's side and says how the counts are used.
 *
 * Built by scripts/build_observer.sh against the CUDA toolkit's CUPTI headers. With
 * -DKF_OBSERVER_SELFTEST it builds, without CUPTI, a program that writes a few lines as the
 * library would (tests/test_observer.py checks the judge's parser against it). */
#define _GNU_SOURCE
#ifndef KF_OBSERVER_SELFTEST
#include <cupti.h>
#endif
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARKER_NAME "_kernforge_observer_marker"
#define TABLE_SIZE 16384 /* distinct launched functions; more is reported as an overflow */
#define NAME_MAX_CHARS 400
#define ORIGIN_MAX_CHARS 80
#define STREAMS_MAX 64 /* distinct streams per window; more are counted together */

typedef struct {
    const void *func; /* CUfunction, or a pseudo key for graph and host-function launches */
    uint64_t count;
    char *name;
    char *origin;
} entry_t;

static entry_t table[TABLE_SIZE];
static uint64_t overflow;
/* the launches of the current window per stream (a CUstream handle, or 1 / 2 for the legacy and
 * the per-thread default stream), so the judge can tell work queued outside the stream its
 * timer records on; streams past STREAMS_MAX are counted under stream_other */
static uintptr_t stream_ids[STREAMS_MAX];
static uint64_t stream_counts[STREAMS_MAX];
static size_t streams_used;
static uint64_t stream_other;
static uint64_t seq;
static uint64_t window;
static uint8_t key[16];
static int out_fd = -1;
static dev_t out_dev;
static ino_t out_ino;
static pthread_mutex_t lock __attribute__((unused)) = PTHREAD_MUTEX_INITIALIZER;

/* ---- SipHash-2-4 (64-bit tag) -------------------------------------------------------------- */
#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                 \
    do {                                                                                         \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                                \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                                   \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                                   \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                                \
    } while (0)

static uint64_t load64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t siphash(const uint8_t *in, size_t len) {
    uint64_t k0 = load64(key), k1 = load64(key + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    size_t end = len - (len % 8);
    for (size_t i = 0; i < end; i += 8) {
        uint64_t m = load64(in + i);
        v3 ^= m; SIPROUND; SIPROUND; v0 ^= m;
    }
    uint64_t b = ((uint64_t)len) << 56;
    for (size_t i = 0; i < len % 8; i++) b |= ((uint64_t)in[end + i]) << (8 * i);
    v3 ^= b; SIPROUND; SIPROUND; v0 ^= b;
    v2 ^= 0xff; SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- output ---------------------------------------------------------------------------------- */
static void die(void) { _exit(87); } /* the same status the worker's own tamper checks use */

static void write_all(const char *buf, size_t len) {
    struct stat st;
    if (fstat(out_fd, &st) != 0 || st.st_dev != out_dev || st.st_ino != out_ino) die();
    while (len > 0) {
        ssize_t n = write(out_fd, buf, len);
        if (n <= 0) die();
        buf += n;
        len -= (size_t)n;
    }
}

/* one line: "<seq> <kind> <window> <count> <origin> <tag> <name>", tagged over the same fields
 * without the tag: "<seq> <kind> <window> <count> <origin> <name>" */
static void emit(char kind, uint64_t count, const char *origin, const char *name) {
    char body[NAME_MAX_CHARS + ORIGIN_MAX_CHARS + 128];
    char line[sizeof(body) + 32];
    int n = snprintf(body, sizeof body, "%llu %c %llu %llu %s %s", (unsigned long long)seq, kind,
                     (unsigned long long)window, (unsigned long long)count, origin, name);
    if (n < 0 || (size_t)n >= sizeof body) n = (int)sizeof body - 1;
    uint64_t tag = siphash((const uint8_t *)body, (size_t)n);
    int m = snprintf(line, sizeof line, "%llu %c %llu %llu %s %016llx %s\n",
                     (unsigned long long)seq, kind, (unsigned long long)window,
                     (unsigned long long)count, origin, (unsigned long long)tag, name);
    if (m < 0 || (size_t)m >= sizeof line) m = (int)sizeof line - 1;
    seq++;
    write_all(line, (size_t)m);
}

/* the counts of the window that the marker closes (launched on stream `marker_stream`), its
 * launches per stream ("S" lines: origin "ref" for the marker's own stream, named even when
 * nothing else ran on it, "other" for the rest), then a line that ends it */
static void close_window(uintptr_t marker_stream) {
    uint64_t lines = 0;
    for (size_t i = 0; i < TABLE_SIZE; i++) {
        if (table[i].func && table[i].count) {
            emit('C', table[i].count, table[i].origin, table[i].name);
            table[i].count = 0;
            lines++;
        }
    }
    if (overflow) {
        emit('C', overflow, "-", "<overflow>");
        overflow = 0;
        lines++;
    }
    char id[32];
    int ref_seen = 0;
    for (size_t i = 0; i < streams_used; i++) {
        snprintf(id, sizeof id, "%llx", (unsigned long long)stream_ids[i]);
        ref_seen |= stream_ids[i] == marker_stream;
        emit('S', stream_counts[i], stream_ids[i] == marker_stream ? "ref" : "other", id);
        lines++;
    }
    if (!ref_seen) { /* the marker's stream is named in every window */
        snprintf(id, sizeof id, "%llx", (unsigned long long)marker_stream);
        emit('S', 0, "ref", id);
        lines++;
    }
    if (stream_other) {
        emit('S', stream_other, "other", "<more-streams>");
        lines++;
    }
    streams_used = 0;
    stream_other = 0;
    emit('E', lines, "-", "-");
    window++;
}

/* ---- attribution ----------------------------------------------------------------------------- */
static char *copy_clean(const char *s, size_t max) {
    size_t n = s ? strnlen(s, max) : 0;
    char *out = malloc(n + 2);
    if (!out) die();
    if (n == 0) {
        out[0] = '?';
        out[1] = 0;
        return out;
    }
    for (size_t i = 0; i < n; i++) out[i] = (s[i] <= ' ' || s[i] == 127) ? '_' : s[i];
    out[n] = 0;
    return out;
}

static int skipped_library(const char *base) {
    return strncmp(base, "libcuda.so", 10) == 0 || strncmp(base, "libcupti", 8) == 0 ||
           strncmp(base, "libkf_observer", 14) == 0;
}

/* the shared object of the first frame on the stack outside the driver, CUPTI and us */
static char *launching_object(void) {
    void *frames[48];
    int n = backtrace(frames, 48);
    for (int i = 0; i < n; i++) {
        Dl_info info;
        if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
        const char *base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        if (skipped_library(base)) continue;
        return copy_clean(base, ORIGIN_MAX_CHARS);
    }
    return copy_clean("?", ORIGIN_MAX_CHARS);
}

static void count_stream(uintptr_t stream) {
    for (size_t i = 0; i < streams_used; i++) {
        if (stream_ids[i] == stream) {
            stream_counts[i]++;
            return;
        }
    }
    if (streams_used < STREAMS_MAX) {
        stream_ids[streams_used] = stream;
        stream_counts[streams_used++] = 1;
    } else {
        stream_other++;
    }
}

/* a stream handle as the judge compares them: the null handle means the legacy default stream
 * through the plain entry points and the per-thread one through the _ptsz ones */
static uintptr_t stream_id(const void *handle, int per_thread) {
    if (handle) return (uintptr_t)handle;
    return per_thread ? 2 : 1;
}

static void count(const void *func, const char *name) {
    size_t h = ((uintptr_t)func >> 4) * 0x9E3779B97F4A7C15ULL % TABLE_SIZE;
    for (size_t probe = 0; probe < TABLE_SIZE; probe++) {
        entry_t *e = &table[(h + probe) % TABLE_SIZE];
        if (e->func == func) {
            e->count++;
            return;
        }
        if (!e->func) {
            e->func = func;
            e->count = 1;
            e->name = copy_clean(name, NAME_MAX_CHARS);
            e->origin = launching_object();
            return;
        }
    }
    overflow++;
}

#ifndef KF_OBSERVER_SELFTEST
static CUpti_SubscriberHandle subscriber;
static char graph_key, host_key;

static void CUPTIAPI on_call(void *userdata, CUpti_CallbackDomain domain,
                             CUpti_CallbackId cbid, const CUpti_CallbackData *info) {
    (void)userdata;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || info->callbackSite != CUPTI_API_ENTER) return;
    const void *func = NULL;
    const void *stream = NULL;
    const char *name = info->symbolName;
    const void *p = info->functionParams;
    int per_thread = 0;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
        per_thread = 1; /* fall through */
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
        func = ((const cuLaunchKernel_params *)p)->f;
        stream = ((const cuLaunchKernel_params *)p)->hStream;
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
        per_thread = 1; /* fall through */
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
        const CUlaunchConfig *config = ((const cuLaunchKernelEx_params *)p)->config;
        func = ((const cuLaunchKernelEx_params *)p)->f;
        stream = config ? config->hStream : NULL;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        per_thread = 1; /* fall through */
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
        func = ((const cuLaunchCooperativeKernel_params *)p)->f;
        stream = ((const cuLaunchCooperativeKernel_params *)p)->hStream;
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
        per_thread = 1; /* fall through */
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
        func = &graph_key;
        name = "<graph-launch>";
        stream = ((const cuGraphLaunch_params *)p)->hStream;
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz:
        per_thread = 1; /* fall through */
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc:
        func = &host_key;
        name = "<host-function>";
        stream = ((const cuLaunchHostFunc_params *)p)->hStream;
        break;
    default:
        return;
    }
    uintptr_t sid = stream_id(stream, per_thread);
    pthread_mutex_lock(&lock);
    if (name && strcmp(name, MARKER_NAME) == 0) {
        close_window(sid);
    } else {
        count(func, name);
        count_stream(sid);
    }
    pthread_mutex_unlock(&lock);
}

static const CUpti_CallbackId watched[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz,
};

static int env_fd(const char *var) {
    const char *v = getenv(var);
    if (!v || !*v) return -1;
    char *end;
    long fd = strtol(v, &end, 10);
    return (*end || fd < 0) ? -1 : (int)fd;
}

/* called by the driver when the process initialises CUDA; returns 1 when observing */
int InitializeInjection(void) {
    int key_fd = env_fd("KERNFORGE_OBSERVER_KEY_FD");
    out_fd = env_fd("KERNFORGE_OBSERVER_FD");
    if (key_fd < 0 || out_fd < 0) die(); /* asked for and not set up: never run unobserved */
    size_t got = 0;
    while (got < sizeof key) {
        ssize_t n = read(key_fd, key + got, sizeof key - got);
        if (n <= 0) die();
        got += (size_t)n;
    }
    close(key_fd);
    struct stat st;
    if (fstat(out_fd, &st) != 0) die();
    out_dev = st.st_dev;
    out_ino = st.st_ino;
    if (cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)on_call, NULL) != CUPTI_SUCCESS) die();
    size_t enabled = 0;
    for (size_t i = 0; i < sizeof watched / sizeof watched[0]; i++)
        enabled += cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, watched[i]) ==
                   CUPTI_SUCCESS;
    if (enabled == 0) die();
    pthread_mutex_lock(&lock);
    emit('B', (uint64_t)getpid(), "-", "kf_observer");
    pthread_mutex_unlock(&lock);
    return 1;
}
#else
/* selftest: argv[1] = the key as 32 hex digits; writes to stdout the stream of three launches of
 * two functions (the last on stream 0x5a5a00), a marker on the legacy default stream, one more
 * launch on the per-thread default stream and a marker */
int main(int argc, char **argv) {
    if (argc < 2 || strlen(argv[1]) != 32) return 2;
    for (int i = 0; i < 16; i++) {
        unsigned int byte;
        if (sscanf(argv[1] + 2 * i, "%2x", &byte) != 1) return 2;
        key[i] = (uint8_t)byte;
    }
    out_fd = 1;
    struct stat st;
    if (fstat(out_fd, &st) != 0) return 3;
    out_dev = st.st_dev;
    out_ino = st.st_ino;
    static char f1, f2;
    emit('B', 4242, "-", "kf_observer");
    count(&f1, "kernel_one");
    count_stream(stream_id(NULL, 0));
    count(&f1, "kernel_one");
    count_stream(stream_id(NULL, 0));
    count(&f2, "kernel two with spaces");
    count_stream(stream_id((const void *)0x5a5a00, 0));
    close_window(stream_id(NULL, 0));
    count(&f2, "kernel two with spaces");
    count_stream(stream_id(NULL, 1));
    close_window(stream_id(NULL, 0));
    return 0;
}
#endif

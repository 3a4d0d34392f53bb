
/*
 * The command board: one shared zone holds the last command and the
 * desired profiling state.  A poster wakes every worker of the current
 * generation through its eventfd (created by the master before the
 * workers fork); the worker applies what changed and writes its own slot.
 * The shm mutex guards copies in and out only: never mallctl, file I/O or
 * dumps.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_channel.h>

#include <sys/eventfd.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_dump.h"


static void ngx_http_malloc_coord_close_wake(void *data);
static void ngx_http_malloc_coord_timer(ngx_event_t *ev);
static void ngx_http_malloc_coord_woken(ngx_event_t *ev);
static void ngx_http_malloc_coord_wake(ngx_http_malloc_main_conf_t *mmcf);
static void ngx_http_malloc_coord_signal(int fd);
static void ngx_http_malloc_coord_apply(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
static ngx_int_t ngx_http_malloc_coord_name(u_char *tmpl, char *name);
static ngx_int_t ngx_http_malloc_coord_dump(ngx_http_malloc_main_conf_t *mmcf,
    u_char *tmpl, ngx_uint_t seq, off_t *bytes, int *err, ngx_log_t *log);
static ngx_int_t ngx_http_malloc_coord_run(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t cmd, ngx_int_t arg, u_char *tmpl, ngx_uint_t seq, int *err,
    off_t *bytes, size_t *before);
static ngx_int_t ngx_http_malloc_coord_stats_file(
    ngx_http_malloc_main_conf_t *mmcf, u_char *tmpl, int *err,
    off_t *bytes);
static void ngx_http_malloc_coord_expire(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
static void ngx_http_malloc_coord_answer(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_int_t rc, int err, off_t bytes, size_t before);
#if (NGX_THREADS)
static ngx_int_t ngx_http_malloc_coord_dump_post(
    ngx_http_malloc_main_conf_t *mmcf, u_char *tmpl, ngx_uint_t seq,
    ngx_log_t *log);
static void ngx_http_malloc_coord_dump_thread(void *data, ngx_log_t *log);
static void ngx_http_malloc_coord_dump_done(ngx_event_t *ev);
#endif


#if (NGX_THREADS)

/* a worker's dump, done by a thread of nginx's default pool */
typedef struct {
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_uint_t                    seq;
    ngx_int_t                     rc;
    int                           err;
    off_t                         bytes;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];
} ngx_http_malloc_dump_task_t;

#endif


/* per process, as nginx keeps ngx_worker: this worker's view of the board */
static ngx_uint_t            ngx_http_malloc_applied;
static ngx_uint_t            ngx_http_malloc_dumping;
#if (NGX_THREADS)
static ngx_thread_task_t    *ngx_http_malloc_dump_task;
#endif
static ngx_uint_t            ngx_http_malloc_generation;
static ngx_event_t           ngx_http_malloc_poll_ev;
static ngx_connection_t      ngx_http_malloc_poll_conn;


ngx_int_t
ngx_http_malloc_coord_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_http_malloc_shm_t  *oshm = data;

    int                     active;
    ngx_http_malloc_shm_t  *shm;

    shm = shm_zone->data;

    if (oshm != NULL) {
        /* a reload: keep the board, and with it the desired state */
        shm->sh = oshm->sh;
        shm->shpool = oshm->shpool;
        return NGX_OK;
    }

    shm->shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (shm_zone->shm.exists) {
        shm->sh = shm->shpool->data;
        return NGX_OK;
    }

    shm->sh = ngx_slab_calloc(shm->shpool, sizeof(ngx_http_malloc_shctx_t));
    if (shm->sh == NULL) {
        return NGX_ERROR;
    }

    shm->shpool->data = shm->sh;
    shm->shpool->log_nomem = 0;

    shm->sh->lg_sample = -1;

    /*
     * the desired state starts as the environment set it (MALLOC_CONF
     * prof_active:true), so that no command turns profiling off unasked
     */

    if (ngx_http_malloc_je_probe()->state == NGX_HTTP_MALLOC_JE_OK
        && ngx_http_malloc_je_get_active(&active) == 0)
    {
        shm->sh->prof_active = active;
    }

    return NGX_OK;
}


/* runs in the master for every new cycle, before its workers start */

ngx_int_t
ngx_http_malloc_coord_init_module(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_uint_t              i, workers;
    ngx_core_conf_t        *ccf;
    ngx_pool_cleanup_t     *cln;
    ngx_http_malloc_shm_t  *shm;

    ccf = (ngx_core_conf_t *) ngx_get_conf(cycle->conf_ctx, ngx_core_module);

    workers = ccf->master ? (ngx_uint_t) ccf->worker_processes : 1;

    if (workers > NGX_MAX_PROCESSES) {
        workers = NGX_MAX_PROCESSES;
    }

    /*
     * The eventfds only wake workers at once; without them the workers
     * see commands on their apply timer.  A failure here must not fail
     * the cycle: at a reload nginx would exit.
     */

    mmcf->nwake = 0;
    mmcf->wake = ngx_palloc(cycle->pool, workers * sizeof(ngx_fd_t));
    cln = ngx_pool_cleanup_add(cycle->pool, 0);

    if (mmcf->wake != NULL && cln != NULL) {
        cln->handler = ngx_http_malloc_coord_close_wake;
        cln->data = mmcf;

        for (i = 0; i < workers; i++) {
            mmcf->wake[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

            if (mmcf->wake[i] == -1) {
                ngx_log_error(NGX_LOG_ERR, cycle->log, ngx_errno,
                              "eventfd() failed: workers from number %ui "
                              "on take commands within a second", i);
                break;
            }

            mmcf->nwake++;
        }
    }

    shm = mmcf->shm_zone->data;

    ngx_shmtx_lock(&shm->shpool->mutex);

    shm->sh->generation++;
    shm->sh->workers = workers;

    /*
     * a command posted by a worker of the old generation (a snapshot, say)
     * may never be released: it must not hold the new workers back
     */
    shm->sh->busy = 0;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return NGX_OK;
}


static void
ngx_http_malloc_coord_close_wake(void *data)
{
    ngx_http_malloc_main_conf_t *mmcf = data;

    ngx_uint_t  i;

    for (i = 0; i < mmcf->nwake; i++) {
        (void) close(mmcf->wake[i]);
    }

    mmcf->nwake = 0;
}


/*
 * A new worker, whether from a reload or respawned after a crash, comes up
 * in the desired state, so profiling survives both.  It has no result for
 * a dump it did not take part in: result_seq says so.
 */

ngx_int_t
ngx_http_malloc_coord_init_process(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf)
{
    int                               active;
    ngx_int_t                         lg;
    ngx_uint_t                        seq, desired;
    ngx_http_malloc_shm_t            *shm;
    ngx_http_malloc_slot_t           *slot;
    const ngx_http_malloc_je_info_t  *info;

    shm = mmcf->shm_zone->data;

    if (ngx_worker >= NGX_MAX_PROCESSES) {
        return NGX_OK;
    }

    ngx_shmtx_lock(&shm->shpool->mutex);

    ngx_http_malloc_generation = shm->sh->generation;
    seq = shm->sh->seq;
    desired = shm->sh->prof_active;
    lg = shm->sh->lg_sample;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    info = ngx_http_malloc_je_probe();
    active = 0;

    if (info->state == NGX_HTTP_MALLOC_JE_OK) {

        if (lg >= 0 && ngx_http_malloc_je_reset(lg) != 0) {
            ngx_log_error(NGX_LOG_ERR, cycle->log, 0,
                          "mallctl(\"prof.reset\") failed");
        }

        if (desired) {
            if (ngx_http_malloc_je_set_active(1) != 0) {
                ngx_log_error(NGX_LOG_ERR, cycle->log, 0,
                              "mallctl(\"prof.active\") failed");
            }
        }

        (void) ngx_http_malloc_je_get_active(&active);
    }

    ngx_shmtx_lock(&shm->shpool->mutex);

    slot = &shm->sh->slots[ngx_worker];
    slot->pid = ngx_pid;
    slot->generation = ngx_http_malloc_generation;
    slot->applied = seq;
    slot->result_seq = 0;
    slot->prof_active = active;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_http_malloc_applied = seq;

    if (info->state != NGX_HTTP_MALLOC_JE_OK) {
        /* nothing to apply: the endpoints say why */
        return NGX_OK;
    }

    if (desired) {
        ngx_log_error(NGX_LOG_INFO, cycle->log, 0,
                      "heap profiling resumed in new worker");
    }

#if (NGX_THREADS)
    if (mmcf->thread_pool != NULL) {
        ngx_http_malloc_dump_task = ngx_thread_task_alloc(cycle->pool,
                                        sizeof(ngx_http_malloc_dump_task_t));
    }
#endif

    ngx_http_malloc_poll_conn.fd = (ngx_socket_t) -1;

    ngx_http_malloc_poll_ev.handler = ngx_http_malloc_coord_timer;
    ngx_http_malloc_poll_ev.data = &ngx_http_malloc_poll_conn;
    ngx_http_malloc_poll_ev.log = cycle->log;
    ngx_http_malloc_poll_ev.cancelable = 1;

    ngx_add_timer(&ngx_http_malloc_poll_ev, NGX_HTTP_MALLOC_POLL);

    if (ngx_worker < mmcf->nwake
        && ngx_add_channel_event(cycle, mmcf->wake[ngx_worker],
                                 NGX_READ_EVENT, ngx_http_malloc_coord_woken)
           != NGX_OK)
    {
        /* the timer still brings commands, only later */
        ngx_log_error(NGX_LOG_ERR, cycle->log, 0,
                      "cannot watch the heap profiling eventfd");
    }

    return NGX_OK;
}


static void
ngx_http_malloc_coord_woken(ngx_event_t *ev)
{
    uint64_t                      n;
    ngx_connection_t             *c;
    ngx_http_malloc_shm_t        *shm;
    ngx_http_malloc_main_conf_t  *mmcf;

    c = ev->data;

    /* level-triggered: drain the counter, however many posts it holds */
    if (read(c->fd, &n, sizeof(n)) == -1 && ngx_errno != NGX_EAGAIN) {
        ngx_log_error(NGX_LOG_ALERT, ev->log, ngx_errno,
                      "read() from eventfd failed");
    }

    if (ngx_exiting || ngx_quit || ngx_terminate) {
        return;
    }

    mmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                               ngx_http_malloc_module);
    shm = mmcf->shm_zone->data;

    if (shm->sh->generation == ngx_http_malloc_generation
        && shm->sh->seq != ngx_http_malloc_applied)
    {
        ngx_http_malloc_coord_apply(mmcf, ev->log);
    }

    ngx_http_malloc_wake_waiting();
}


static void
ngx_http_malloc_coord_wake(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_uint_t  i;

    for (i = 0; i < mmcf->nwake; i++) {
        if (i != ngx_worker) {
            ngx_http_malloc_coord_signal(mmcf->wake[i]);
        }
    }
}


static void
ngx_http_malloc_coord_signal(int fd)
{
    uint64_t  one;

    one = 1;

    /* EAGAIN: the counter is already set, the worker will come */

    if (write(fd, &one, sizeof(one)) == -1 && ngx_errno != NGX_EAGAIN) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, ngx_errno,
                      "write() to eventfd failed");
    }
}


static void
ngx_http_malloc_coord_timer(ngx_event_t *ev)
{
    int                           active;
    ngx_http_malloc_shm_t        *shm;
    ngx_http_malloc_slot_t       *slot;
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ngx_exiting || ngx_quit || ngx_terminate) {
        return;
    }

    mmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                               ngx_http_malloc_module);
    shm = mmcf->shm_zone->data;

    if (shm->sh->generation != ngx_http_malloc_generation) {
        /* an older generation: the new workers answer from now on */
        return;
    }

    ngx_http_malloc_coord_expire(mmcf, ev->log);
    ngx_http_malloc_snapshot_tick(mmcf, ev->log);

    if (shm->sh->seq != ngx_http_malloc_applied) {
        ngx_http_malloc_coord_apply(mmcf, ev->log);

    } else if (ngx_http_malloc_je_get_active(&active) == 0) {
        /* single writer: a plain store keeps GET in step with mallctl */
        slot = &shm->sh->slots[ngx_worker];
        slot->prof_active = active;
    }

    ngx_add_timer(ev, NGX_HTTP_MALLOC_POLL);
}


static void
ngx_http_malloc_coord_apply(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    int                     active, err;
    off_t                   bytes;
    size_t                  before;
    ngx_int_t               rc, arg;
    ngx_pid_t               target;
    ngx_uint_t              seq, cmd, desired, busy;
    ngx_http_malloc_shm_t  *shm;
    u_char                  tmpl[NGX_HTTP_MALLOC_TMPL_MAX];

    shm = mmcf->shm_zone->data;

    if (ngx_http_malloc_dumping) {
        /* the dump's completion looks at the board again */
        return;
    }

    ngx_shmtx_lock(&shm->shpool->mutex);

    seq = shm->sh->seq;
    cmd = shm->sh->cmd;
    desired = shm->sh->prof_active;
    busy = shm->sh->busy;
    target = shm->sh->target;
    arg = shm->sh->arg;
    ngx_memcpy(tmpl, shm->sh->tmpl, NGX_HTTP_MALLOC_TMPL_MAX);

    ngx_shmtx_unlock(&shm->shpool->mutex);

    rc = NGX_HTTP_MALLOC_DUMP_OK;
    err = 0;
    bytes = 0;
    before = 0;
    active = 0;

    (void) ngx_http_malloc_je_get_active(&active);

    if ((ngx_uint_t) active != desired) {
        err = ngx_http_malloc_je_set_active(desired);

        if (err != 0) {
            ngx_log_error(NGX_LOG_ERR, log, err,
                          "mallctl(\"prof.active\") failed");
            rc = NGX_HTTP_MALLOC_RC_ACTIVE;

        } else {
            ngx_log_error(NGX_LOG_INFO, log, 0, "heap profiling turned %s",
                          desired ? "on" : "off");
        }
    }

    if (cmd == NGX_HTTP_MALLOC_CMD_DUMP && !busy) {
        /* a stopped worker woke up after the request gave up on it */
        rc = NGX_HTTP_MALLOC_DUMP_EXPIRED;

    } else if (cmd == NGX_HTTP_MALLOC_CMD_DUMP
               && rc == NGX_HTTP_MALLOC_DUMP_OK
               && (target == 0 || target == ngx_pid))
    {
#if (NGX_THREADS)
        if (ngx_http_malloc_coord_dump_post(mmcf, tmpl, seq, log) == NGX_OK) {
            return;
        }
#endif

        rc = ngx_http_malloc_coord_dump(mmcf, tmpl, seq, &bytes, &err, log);

    } else if (rc == NGX_HTTP_MALLOC_DUMP_OK && busy) {
        rc = ngx_http_malloc_coord_run(mmcf, cmd, arg, tmpl, seq, &err,
                                       &bytes, &before);

        if (rc != NGX_HTTP_MALLOC_DUMP_OK) {
            ngx_log_error(NGX_LOG_ERR, log, err, "heap profiling %s failed "
                          "in this worker",
                          cmd == NGX_HTTP_MALLOC_CMD_RESET ? "reset"
                          : cmd == NGX_HTTP_MALLOC_CMD_PURGE ? "purge"
                          : "statistics");
        }
    }

    ngx_http_malloc_coord_answer(mmcf, seq, rc, err, bytes, before);
}


/* the quick commands: run in the event loop, they take microseconds */

static ngx_int_t
ngx_http_malloc_coord_run(ngx_http_malloc_main_conf_t *mmcf, ngx_uint_t cmd,
    ngx_int_t arg, u_char *tmpl, ngx_uint_t seq, int *err, off_t *bytes,
    size_t *before)
{
    ngx_http_malloc_je_stats_t  st;

    switch (cmd) {

    case NGX_HTTP_MALLOC_CMD_RESET:
        *err = ngx_http_malloc_je_reset((int) arg);
        return *err ? NGX_HTTP_MALLOC_RC_RESET : NGX_HTTP_MALLOC_DUMP_OK;

    case NGX_HTTP_MALLOC_CMD_PURGE:
        if (ngx_http_malloc_je_stats(&st) == 0) {
            *before = st.resident;
        }

        *err = ngx_http_malloc_je_purge();
        return *err ? NGX_HTTP_MALLOC_RC_PURGE : NGX_HTTP_MALLOC_DUMP_OK;

    case NGX_HTTP_MALLOC_CMD_STATS:
        if (tmpl[0] == '\0') {
            /* the figures go into the slot with every answer */
            return NGX_HTTP_MALLOC_DUMP_OK;
        }

        return ngx_http_malloc_coord_stats_file(mmcf, tmpl, err, bytes);

    default:
        return NGX_HTTP_MALLOC_DUMP_OK;
    }
}


/* jemalloc's full JSON report, into a hidden file the poster reads back */

static ngx_int_t
ngx_http_malloc_coord_stats_file(ngx_http_malloc_main_conf_t *mmcf,
    u_char *tmpl, int *err, off_t *bytes)
{
    int          dfd, fd;
    struct stat  st;
    char         name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    if (ngx_http_malloc_coord_name(tmpl, name) != NGX_OK) {
        *err = NGX_ENAMETOOLONG;
        return NGX_HTTP_MALLOC_RC_STATS;
    }

    dfd = open((char *) mmcf->dump_dir->name.data,
               O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd == -1) {
        *err = ngx_errno;
        return NGX_HTTP_MALLOC_DUMP_DIR;
    }

    fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
    *err = (fd == -1) ? ngx_errno : 0;

    (void) close(dfd);

    if (fd == -1) {
        return NGX_HTTP_MALLOC_DUMP_CREATE;
    }

    *err = ngx_http_malloc_je_stats_json(fd);

    if (*err == 0 && fstat(fd, &st) == 0) {
        *bytes = st.st_size;
    }

    (void) close(fd);

    return *err ? NGX_HTTP_MALLOC_RC_STATS : NGX_HTTP_MALLOC_DUMP_OK;
}


/*
 * Profiling turned on with a duration turns itself off: the first worker
 * whose timer sees the time up posts the change for all, as an operator
 * would.  Nobody waits for the answer.
 */

static void
ngx_http_malloc_coord_expire(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;

    if (!shm->sh->prof_active || shm->sh->active_until == 0
        || (ngx_msec_int_t) (shm->sh->active_until - ngx_current_msec) > 0)
    {
        return;
    }

    ngx_shmtx_lock(&shm->shpool->mutex);

    if (!shm->sh->prof_active || shm->sh->active_until == 0
        || (ngx_msec_int_t) (shm->sh->active_until - ngx_current_msec) > 0
        || (shm->sh->busy
            && (ngx_msec_int_t) (shm->sh->busy_until - ngx_current_msec) > 0))
    {
        /* another worker did it, or a command is pending: next time */
        ngx_shmtx_unlock(&shm->shpool->mutex);
        return;
    }

    shm->sh->cmd = NGX_HTTP_MALLOC_CMD_ACTIVE;
    shm->sh->prof_active = 0;
    shm->sh->active_until = 0;
    shm->sh->tmpl[0] = '\0';
    shm->sh->busy = 0;

    ngx_memory_barrier();
    shm->sh->seq++;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_log_error(NGX_LOG_NOTICE, log, 0,
                  "heap profiling turned off: its duration has elapsed");

    ngx_http_malloc_coord_wake(mmcf);
    ngx_http_malloc_coord_apply(mmcf, log);
}


/* writes this worker's slot: it has seen "seq", with this result */

static void
ngx_http_malloc_coord_answer(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_int_t rc, int err, off_t bytes, size_t before)
{
    int                          active;
    size_t                       lg;
    ngx_uint_t                   poster;
    ngx_http_malloc_shm_t       *shm;
    ngx_http_malloc_slot_t      *slot;
    ngx_http_malloc_je_stats_t   st;

    shm = mmcf->shm_zone->data;
    active = 0;
    lg = 0;

    (void) ngx_http_malloc_je_get_active(&active);
    (void) ngx_http_malloc_je_lg_sample(&lg);

    ngx_memzero(&st, sizeof(ngx_http_malloc_je_stats_t));
    (void) ngx_http_malloc_je_stats(&st);

    if (ngx_http_malloc_generation == shm->sh->generation
        && ngx_worker < NGX_MAX_PROCESSES)
    {
        ngx_shmtx_lock(&shm->shpool->mutex);

        slot = &shm->sh->slots[ngx_worker];
        slot->pid = ngx_pid;
        slot->applied = seq;
        slot->result_seq = seq;
        slot->rc = rc;
        slot->err = err;
        slot->bytes = bytes;
        slot->prof_active = active;
        slot->lg_sample = lg;
        slot->resident_before = before;
        slot->stats = st;

        poster = shm->sh->poster;

        ngx_shmtx_unlock(&shm->shpool->mutex);

        /* the poster's waiting request looks at once */

        if (poster == ngx_worker) {
            ngx_http_malloc_wake_waiting();

        } else if (poster < mmcf->nwake) {
            ngx_http_malloc_coord_signal(mmcf->wake[poster]);
        }
    }

    ngx_http_malloc_applied = seq;
}


#if (NGX_THREADS)

/*
 * A dump of many stacks takes jemalloc a while (about 3 us a stack): a
 * thread does it, so the worker keeps serving its connections meanwhile.
 * NGX_DECLINED when there is no thread pool or the task cannot be posted:
 * the caller dumps in place.
 */

static ngx_int_t
ngx_http_malloc_coord_dump_post(ngx_http_malloc_main_conf_t *mmcf,
    u_char *tmpl, ngx_uint_t seq, ngx_log_t *log)
{
    ngx_http_malloc_dump_task_t  *dt;

    if (mmcf->thread_pool == NULL || ngx_http_malloc_dump_task == NULL) {
        return NGX_DECLINED;
    }

    dt = ngx_http_malloc_dump_task->ctx;

    if (ngx_http_malloc_coord_name(tmpl, dt->name) != NGX_OK) {
        return NGX_DECLINED;
    }

    dt->mmcf = mmcf;
    dt->seq = seq;

    ngx_http_malloc_dump_task->handler = ngx_http_malloc_coord_dump_thread;
    ngx_http_malloc_dump_task->event.handler = ngx_http_malloc_coord_dump_done;
    ngx_http_malloc_dump_task->event.data = dt;
    ngx_http_malloc_dump_task->event.log = log;

    if (ngx_thread_task_post(mmcf->thread_pool, ngx_http_malloc_dump_task)
        != NGX_OK)
    {
        return NGX_DECLINED;
    }

    ngx_http_malloc_dumping = 1;

    return NGX_OK;
}


/* in a thread: no logging, no nginx memory besides the task */

static void
ngx_http_malloc_coord_dump_thread(void *data, ngx_log_t *log)
{
    ngx_http_malloc_dump_task_t *dt = data;

    dt->err = 0;
    dt->rc = ngx_http_malloc_dump_write(
                 (char *) dt->mmcf->dump_dir->name.data, dt->name, dt->seq,
                 &dt->bytes, &dt->err);
}


static void
ngx_http_malloc_coord_dump_done(ngx_event_t *ev)
{
    ngx_http_malloc_dump_task_t *dt = ev->data;

    ngx_http_malloc_shm_t  *shm;

    ngx_http_malloc_dumping = 0;

    if (dt->rc != NGX_HTTP_MALLOC_DUMP_OK) {
        ngx_log_error(NGX_LOG_ERR, ev->log, dt->err,
                      "heap dump to \"%V/%s\" failed: %s",
                      &dt->mmcf->dump_dir->name, dt->name,
                      ngx_http_malloc_dump_strerror(dt->rc));

    } else if (dt->name[0] == '.') {
        /* a profile's or a snapshot's: its request or schedule logs it */
        ngx_log_debug3(NGX_LOG_DEBUG_HTTP, ev->log, 0,
                       "heap dump written to \"%V/%s\", %O bytes",
                       &dt->mmcf->dump_dir->name, dt->name, dt->bytes);

    } else {
        ngx_log_error(NGX_LOG_INFO, ev->log, 0,
                      "heap dump written to \"%V/%s\", %O bytes",
                      &dt->mmcf->dump_dir->name, dt->name, dt->bytes);
    }

    ngx_http_malloc_coord_answer(dt->mmcf, dt->seq, dt->rc, dt->err,
                                 dt->bytes, 0);

    /* a command posted while the thread worked */

    shm = dt->mmcf->shm_zone->data;

    if (!ngx_exiting && shm->sh->seq != ngx_http_malloc_applied
        && shm->sh->generation == ngx_http_malloc_generation)
    {
        ngx_http_malloc_coord_apply(dt->mmcf, ngx_cycle->log);
    }
}

#endif


/* this worker's file name from the board's template ("%p": its pid) */

static ngx_int_t
ngx_http_malloc_coord_name(u_char *tmpl, char *name)
{
    tmpl[NGX_HTTP_MALLOC_TMPL_MAX - 1] = '\0';

    if (ngx_http_malloc_path_expand((char *) tmpl, (long) ngx_pid, name,
                                    NGX_HTTP_MALLOC_NAME_MAX + 1)
        < 0)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_malloc_coord_dump(ngx_http_malloc_main_conf_t *mmcf, u_char *tmpl,
    ngx_uint_t seq, off_t *bytes, int *err, ngx_log_t *log)
{
    ngx_int_t  rc;
    char       name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    if (ngx_http_malloc_coord_name(tmpl, name) != NGX_OK) {
        *err = NGX_ENAMETOOLONG;
        return NGX_HTTP_MALLOC_DUMP_CREATE;
    }

    rc = ngx_http_malloc_dump_write((char *) mmcf->dump_dir->name.data,
                                    name, seq, bytes, err);

    if (rc != NGX_HTTP_MALLOC_DUMP_OK) {
        ngx_log_error(NGX_LOG_ERR, log, *err,
                      "heap dump to \"%V/%s\" failed: %s",
                      &mmcf->dump_dir->name, name,
                      ngx_http_malloc_dump_strerror(rc));

    } else {
        ngx_log_error(NGX_LOG_INFO, log, 0,
                      "heap dump written to \"%V/%s\", %O bytes",
                      &mmcf->dump_dir->name, name, *bytes);
    }

    return rc;
}


/*
 * Posts a command and wakes the other workers.  NGX_BUSY when another
 * command is still being answered: writes never interleave.
 */

ngx_int_t
ngx_http_malloc_coord_post(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_ctx_t *ctx, ngx_uint_t prof_active, ngx_msec_t timeout)
{
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;

    ngx_shmtx_lock(&shm->shpool->mutex);

    if (shm->sh->busy
        && (ngx_msec_int_t) (shm->sh->busy_until - ngx_current_msec) > 0)
    {
        ngx_shmtx_unlock(&shm->shpool->mutex);
        return NGX_BUSY;
    }

    ctx->seq = shm->sh->seq + 1;
    shm->sh->cmd = ctx->cmd;

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_ACTIVE) {
        shm->sh->prof_active = prof_active;
        shm->sh->active_until = (prof_active && ctx->duration)
                                ? ngx_current_msec + ctx->duration : 0;
    }

    shm->sh->arg = ctx->arg;

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_RESET && ctx->arg >= 0) {
        /* new workers come up sampling at this rate too */
        shm->sh->lg_sample = ctx->arg;
    }

    ngx_memcpy(shm->sh->tmpl, ctx->tmpl, NGX_HTTP_MALLOC_TMPL_MAX);
    shm->sh->target = ctx->target;

    shm->sh->busy = 1;
    shm->sh->busy_until = ngx_current_msec + timeout + 1000;
    shm->sh->poster = ngx_worker;

    ngx_memory_barrier();
    shm->sh->seq = ctx->seq;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ctx->deadline = ngx_current_msec + timeout;

    ngx_http_malloc_coord_wake(mmcf);

    return NGX_OK;
}


/* the poster applies its own command at once */

void
ngx_http_malloc_coord_apply_own(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    ngx_http_malloc_coord_apply(mmcf, log);
}


void
ngx_http_malloc_coord_release(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq)
{
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;

    ngx_shmtx_lock(&shm->shpool->mutex);

    if (shm->sh->seq == seq) {
        shm->sh->busy = 0;
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);
}


/*
 * Copies the slots of the current generation's workers; a slot counts as
 * answered once its worker has seen "seq" (0: once it is up); "answers"
 * may be NULL to count only.  Returns the
 * number of answers.  *n holds the room in "answers" and gets the count.
 */

ngx_uint_t
ngx_http_malloc_coord_answers(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_http_malloc_answer_t *answers, ngx_uint_t *n)
{
    ngx_uint_t               i, ok, answered;
    ngx_http_malloc_shm_t   *shm;
    ngx_http_malloc_slot_t  *slot;

    shm = mmcf->shm_zone->data;
    answered = 0;

    ngx_shmtx_lock(&shm->shpool->mutex);

    if (*n > shm->sh->workers) {
        *n = shm->sh->workers;
    }

    for (i = 0; i < *n; i++) {
        slot = &shm->sh->slots[i];

        ok = (slot->generation == shm->sh->generation && slot->pid != 0
              && slot->applied >= seq);
        answered += ok;

        if (answers == NULL) {
            continue;
        }

        answers[i].worker = i;
        answers[i].slot = *slot;
        answers[i].answered = ok;

        if (slot->generation != shm->sh->generation) {
            answers[i].slot.pid = 0;
        }
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return answered;
}


ngx_uint_t
ngx_http_malloc_coord_workers(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;

    return shm->sh->workers;
}


ngx_uint_t
ngx_http_malloc_coord_desired(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;

    return shm->sh->prof_active;
}


/* what is left of a duration, in ms; 0 when none runs */

ngx_msec_t
ngx_http_malloc_coord_remaining(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_msec_t              until;
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;
    until = shm->sh->active_until;

    if (!shm->sh->prof_active || until == 0
        || (ngx_msec_int_t) (until - ngx_current_msec) <= 0)
    {
        return 0;
    }

    return until - ngx_current_msec;
}


/* 1 when the worker "pid" of the current generation has seen "seq" */

ngx_uint_t
ngx_http_malloc_coord_answered(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_pid_t pid)
{
    ngx_uint_t               i, ok;
    ngx_http_malloc_shm_t   *shm;
    ngx_http_malloc_slot_t  *slot;

    shm = mmcf->shm_zone->data;
    ok = 0;

    ngx_shmtx_lock(&shm->shpool->mutex);

    for (i = 0; i < shm->sh->workers; i++) {
        slot = &shm->sh->slots[i];

        if (slot->pid == pid && slot->generation == shm->sh->generation
            && slot->applied >= seq)
        {
            ok = 1;
        }
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return ok;
}

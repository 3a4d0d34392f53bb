
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The board: one shared zone, reused across reloads, that holds the
 * desired state, a ring of the last commands and one slot per worker.  A
 * poster puts a command in the ring and wakes every worker of the current
 * generation through its eventfd (created by the master before the
 * workers fork); each worker applies the commands in order and writes its
 * results and its figures into its own slot.  Readers copy slots out.
 * The shm mutex guards copies in and out only: never mallctl, file I/O or
 * dumps.
 *
 * Owns: the zone's layout (the features' parts in it are theirs, read
 * and written between ngx_http_malloc_board_lock() and _unlock()), the
 * eventfds, the once-a-second timer.  Calls:
 * the pure ring (when an entry is spent), the jemalloc wrapper (the first
 * desired state), rss (the master's start made the daemon's), and up
 * only through the hooks that were registered with
 * ngx_http_malloc_board_hook().
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_channel.h>

#include <sys/eventfd.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_ring.h"
#include "ngx_http_malloc_schedule.h"
#include "ngx_http_malloc_export.h"


#define NGX_HTTP_MALLOC_HOOKS        4


/*
 * written only by its worker; its pid, generation, the last command it
 * saw and when it last published are its peer in the ring
 */
typedef struct {
    ngx_uint_t                  prof_active;
    ngx_uint_t                  lg_sample;
    ngx_http_malloc_je_stats_t  stats;
    ngx_http_malloc_rss_t       rss;
    ngx_http_malloc_rss_t       rss_start;
    ngx_http_malloc_maps_t      maps;       /* of rss, grown since
                                               rss_start */
    ngx_http_malloc_result_t    results[NGX_HTTP_MALLOC_RING];
    ngx_http_malloc_tally_table_t  *traffic;  /* malloc_traffic on: in the
                                                 zone's slab pool, NULL:
                                                 none yet */
    ngx_uint_t                  traffic_failed;  /* said once */
} ngx_http_malloc_slot_t;


typedef struct {
    ngx_http_malloc_ring_t      ring;        /* the commands, the workers
                                                of the generation (bumped
                                                by every cycle) */
    ngx_http_malloc_cmd_t       cmds[NGX_HTTP_MALLOC_RING];
    ngx_uint_t                  prof_active; /* desired state */
    ngx_msec_t                  active_until;  /* 0: no duration */
    ngx_int_t                   lg_sample;   /* of the last reset, or -1 */
    ngx_uint_t                  switches;    /* of prof_active */
    ngx_uint_t                  recorded;    /* the last generation whose
                                                first worker came up */
    ngx_http_malloc_gen_t       gens[NGX_HTTP_MALLOC_GENERATIONS];
    ngx_http_malloc_watch_t     watch;       /* the features' parts */
    ngx_http_malloc_schedule_part_t  schedule;
    ngx_uint_t                  nzones;      /* of the generation */
    ngx_http_malloc_zone_t      zones[NGX_HTTP_MALLOC_RSS_ZONES];
    ngx_http_malloc_master_t    master;
    ngx_http_malloc_export_state_t   export;
    ngx_http_malloc_slot_t      slots[NGX_MAX_PROCESSES];
} ngx_http_malloc_shctx_t;


typedef struct {
    ngx_http_malloc_shctx_t    *sh;
    ngx_slab_pool_t            *shpool;
} ngx_http_malloc_shm_t;


/* entries given up by a put, and their commands, copied under the lock */
typedef struct {
    size_t                        n;
    ngx_http_malloc_ring_given_t  entries[NGX_HTTP_MALLOC_RING];
    ngx_uint_t                    kinds[NGX_HTTP_MALLOC_RING];
} ngx_http_malloc_given_t;


static void ngx_http_malloc_board_inherited(ngx_http_malloc_rss_t *rss,
    size_t allocated);
static ngx_int_t ngx_http_malloc_board_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static void ngx_http_malloc_board_close_wake(void *data);
static void ngx_http_malloc_board_timer(ngx_event_t *ev);
static void ngx_http_malloc_board_woken(ngx_event_t *ev);
static void ngx_http_malloc_board_local(ngx_event_t *ev);
static void ngx_http_malloc_board_run(ngx_uint_t event, ngx_log_t *log);
static ngx_uint_t ngx_http_malloc_board_put(ngx_http_malloc_shctx_t *sh,
    ngx_http_malloc_cmd_t *cmd, ngx_uint_t reserve, ngx_msec_t wait,
    ngx_http_malloc_given_t *given);
static void ngx_http_malloc_board_given_up(ngx_http_malloc_given_t *given,
    ngx_log_t *log);
static const char *ngx_http_malloc_board_kind(ngx_uint_t kind);
static void ngx_http_malloc_board_wake(ngx_http_malloc_main_conf_t *mmcf);
static void ngx_http_malloc_board_signal(int fd);


/* per process, as nginx keeps ngx_worker: this worker's view */
typedef struct {
    ngx_uint_t                  generation;
    ngx_uint_t                  applied;    /* the last command seen */
    ngx_uint_t                  registered;
    ngx_event_t                 poll_ev;
    ngx_event_t                 local_ev;
    ngx_connection_t            dummy;
    ngx_http_malloc_hook_pt     hooks[NGX_HTTP_MALLOC_HOOK_MAX]
                                     [NGX_HTTP_MALLOC_HOOKS];
} ngx_http_malloc_view_t;


static ngx_http_malloc_view_t  ngx_http_malloc_view;


#define ngx_http_malloc_board_shm(mmcf)                                       \
    ((ngx_http_malloc_shm_t *) (mmcf)->shm_zone->data)


static ngx_str_t  ngx_http_malloc_zone_name = ngx_string("ngx_http_malloc");


/* the zone, at configuration time; nginx keeps it across reloads */

ngx_int_t
ngx_http_malloc_board_add(ngx_conf_t *cf, ngx_http_malloc_main_conf_t *mmcf)
{
    size_t                  size;
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_pcalloc(cf->pool, sizeof(ngx_http_malloc_shm_t));
    if (shm == NULL) {
        return NGX_ERROR;
    }

    /* and room for the workers' traffic tables (malloc_traffic) */

    size = ngx_align(sizeof(ngx_http_malloc_shctx_t), ngx_pagesize)
           + (8 + NGX_HTTP_MALLOC_TRAFFIC_PAGES) * ngx_pagesize;

    mmcf->shm_zone = ngx_shared_memory_add(cf, &ngx_http_malloc_zone_name,
                                           size, &ngx_http_malloc_module);
    if (mmcf->shm_zone == NULL) {
        return NGX_ERROR;
    }

    mmcf->shm_zone->init = ngx_http_malloc_board_init_zone;
    mmcf->shm_zone->data = shm;

    return NGX_OK;
}


static ngx_int_t
ngx_http_malloc_board_init_zone(ngx_shm_zone_t *shm_zone, void *data)
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
ngx_http_malloc_board_init_module(ngx_cycle_t *cycle,
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
     * see commands on their timer.  A failure here must not fail the
     * cycle: at a reload nginx would exit.
     */

    mmcf->nwake = 0;
    mmcf->wake = ngx_palloc(cycle->pool, workers * sizeof(ngx_fd_t));
    cln = ngx_pool_cleanup_add(cycle->pool, 0);

    if (mmcf->wake != NULL && cln != NULL) {
        cln->handler = ngx_http_malloc_board_close_wake;
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

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    shm->sh->ring.generation++;
    shm->sh->ring.begun = shm->sh->ring.seq;
    shm->sh->ring.begun_at = ngx_current_msec;
    shm->sh->ring.npeers = workers;
    shm->sh->nzones = ngx_http_malloc_board_ranges(cycle, NULL,
                                                   shm->sh->zones);

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_log_debug2(NGX_LOG_DEBUG_CORE, cycle->log, 0,
                   "malloc board: generation %ui, %ui workers",
                   (ngx_uint_t) shm->sh->ring.generation, workers);

    return NGX_OK;
}


static void
ngx_http_malloc_board_close_wake(void *data)
{
    ngx_http_malloc_main_conf_t *mmcf = data;

    ngx_uint_t  i;

    for (i = 0; i < mmcf->nwake; i++) {
        if (close(mmcf->wake[i]) == -1) {
            ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, ngx_errno,
                          "close() of eventfd failed");
        }
    }

    mmcf->nwake = 0;
}


/*
 * A new worker, whether from a reload or respawned after a crash, takes
 * its slot; the commands posted before its generation began are over for
 * it.  The desired state is the apply hook's to bring.
 */

ngx_int_t
ngx_http_malloc_board_init_process(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_shm_t        *shm;
    ngx_http_malloc_slot_t       *slot;
    ngx_http_malloc_ring_peer_t  *peer;

    if (ngx_worker >= NGX_MAX_PROCESSES) {
        return NGX_OK;
    }

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    /*
     * what was posted to the generation before its first workers came up
     * (by an old worker, between the reload and their start) is for them
     * too; a worker respawned later starts from now, as the one it
     * replaces is reported restarted
     */

    peer = &shm->sh->ring.peers[ngx_worker];

    ngx_http_malloc_view.generation = shm->sh->ring.generation;
    ngx_http_malloc_view.applied =
        (peer->generation == shm->sh->ring.generation && peer->pid != 0)
        ? shm->sh->ring.seq : shm->sh->ring.begun;

    slot = &shm->sh->slots[ngx_worker];
    ngx_memzero(slot, sizeof(ngx_http_malloc_slot_t));

    peer->pid = ngx_pid;
    peer->generation = ngx_http_malloc_view.generation;
    peer->applied = ngx_http_malloc_view.applied;
    peer->published = ngx_current_msec;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_http_malloc_view.registered = 1;

    ngx_http_malloc_view.dummy.fd = (ngx_socket_t) -1;

    ngx_http_malloc_view.poll_ev.handler = ngx_http_malloc_board_timer;
    ngx_http_malloc_view.poll_ev.data = &ngx_http_malloc_view.dummy;
    ngx_http_malloc_view.poll_ev.log = cycle->log;
    ngx_http_malloc_view.poll_ev.cancelable = 1;

    ngx_http_malloc_view.local_ev.handler = ngx_http_malloc_board_local;
    ngx_http_malloc_view.local_ev.data = &ngx_http_malloc_view.dummy;
    ngx_http_malloc_view.local_ev.log = cycle->log;

    ngx_add_timer(&ngx_http_malloc_view.poll_ev, NGX_HTTP_MALLOC_POLL);

    if (ngx_worker < mmcf->nwake
        && ngx_add_channel_event(cycle, mmcf->wake[ngx_worker],
                                 NGX_READ_EVENT, ngx_http_malloc_board_woken)
           != NGX_OK)
    {
        /* the timer still brings commands, only later */
        ngx_log_error(NGX_LOG_ERR, cycle->log, 0,
                      "cannot watch the heap profiling eventfd");
    }

    ngx_log_debug3(NGX_LOG_DEBUG_CORE, cycle->log, 0,
                   "malloc board: worker %ui took its slot, generation %ui, "
                   "seq %ui", ngx_worker, ngx_http_malloc_view.generation,
                   ngx_http_malloc_view.applied);

    return NGX_OK;
}


void
ngx_http_malloc_board_hook(ngx_uint_t event, ngx_http_malloc_hook_pt hook)
{
    ngx_uint_t  i;

    for (i = 0; i < NGX_HTTP_MALLOC_HOOKS; i++) {
        if (ngx_http_malloc_view.hooks[event][i] == NULL
            || ngx_http_malloc_view.hooks[event][i] == hook)
        {
            ngx_http_malloc_view.hooks[event][i] = hook;
            return;
        }
    }
}


static void
ngx_http_malloc_board_run(ngx_uint_t event, ngx_log_t *log)
{
    ngx_uint_t  i;

    for (i = 0; i < NGX_HTTP_MALLOC_HOOKS; i++) {
        if (ngx_http_malloc_view.hooks[event][i] != NULL) {
            ngx_http_malloc_view.hooks[event][i](log);
        }
    }
}


static void
ngx_http_malloc_board_timer(ngx_event_t *ev)
{
    if (ngx_exiting || ngx_quit || ngx_terminate) {
        return;
    }

    /* an older generation's worker has no say: the new ones answer */

    if (ngx_http_malloc_board_current(
            ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                                ngx_http_malloc_module)))
    {
        ngx_http_malloc_board_run(NGX_HTTP_MALLOC_HOOK_TICK, ev->log);
        ngx_http_malloc_board_run(NGX_HTTP_MALLOC_HOOK_WAKE, ev->log);
    }

    if (!ngx_exiting) {
        ngx_add_timer(ev, NGX_HTTP_MALLOC_POLL);
    }
}


static void
ngx_http_malloc_board_woken(ngx_event_t *ev)
{
    uint64_t           n;
    ngx_connection_t  *c;

    c = ev->data;

    /* level-triggered: drain the counter, however many posts it holds */
    if (read(c->fd, &n, sizeof(n)) == -1 && ngx_errno != NGX_EAGAIN) {
        ngx_log_error(NGX_LOG_ALERT, ev->log, ngx_errno,
                      "read() from eventfd failed");
    }

    if (ngx_quit || ngx_terminate) {
        return;
    }

    ngx_http_malloc_board_run(NGX_HTTP_MALLOC_HOOK_WAKE, ev->log);
}


/* this worker's own post or answer: the hooks run once the caller is done */

static void
ngx_http_malloc_board_local(ngx_event_t *ev)
{
    ngx_http_malloc_board_run(NGX_HTTP_MALLOC_HOOK_WAKE, ev->log);
}


static void
ngx_http_malloc_board_wake(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_uint_t  i;

    for (i = 0; i < mmcf->nwake; i++) {
        if (i != ngx_worker || !ngx_http_malloc_view.registered) {
            ngx_http_malloc_board_signal(mmcf->wake[i]);
        }
    }

    if (ngx_http_malloc_view.registered
        && !ngx_http_malloc_view.local_ev.posted)
    {
        ngx_post_event(&ngx_http_malloc_view.local_ev, &ngx_posted_events);
    }
}


static void
ngx_http_malloc_board_signal(int fd)
{
    uint64_t  one;

    one = 1;

    /* EAGAIN: the counter is already set, the worker will come */

    if (write(fd, &one, sizeof(one)) == -1 && ngx_errno != NGX_EAGAIN) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, ngx_errno,
                      "write() to eventfd failed");
    }
}


/*
 * Posts a command and wakes the workers; returns its seq, or 0 when the
 * ring has no room: "reserve" more entries must stay free after it (a
 * read leaves NGX_HTTP_MALLOC_RING_WRITES to the writes).  "wait" is how
 * long the poster waits for the answers, 0 when nobody does.  Each worker
 * applies the commands in order, so the last write wins, and each poster
 * finds its own results in the slots.
 */

ngx_uint_t
ngx_http_malloc_board_post(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_cmd_t *cmd, ngx_uint_t reserve, ngx_msec_t wait,
    ngx_log_t *log)
{
    ngx_uint_t               seq;
    ngx_http_malloc_shm_t   *shm;
    ngx_http_malloc_given_t  given;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);
    seq = ngx_http_malloc_board_put(shm->sh, cmd, reserve, wait, &given);
    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_http_malloc_board_given_up(&given, log);

    if (seq == 0) {
        ngx_log_debug2(NGX_LOG_DEBUG_CORE, log, 0,
                       "malloc board: no room for command %ui after seq %ui",
                       cmd->kind, (ngx_uint_t) shm->sh->ring.seq);
        return 0;
    }

    ngx_log_debug4(NGX_LOG_DEBUG_CORE, log, 0,
                   "malloc board: posted seq %ui, command %ui, arg %i, "
                   "target %P", seq, cmd->kind, cmd->arg, cmd->target);

    ngx_http_malloc_board_wake(mmcf);

    return seq;
}


/* with the zone locked: the ring's entry, the command, the desired state */

static ngx_uint_t
ngx_http_malloc_board_put(ngx_http_malloc_shctx_t *sh,
    ngx_http_malloc_cmd_t *cmd, ngx_uint_t reserve, ngx_msec_t wait,
    ngx_http_malloc_given_t *given)
{
    size_t      i;
    unsigned    poster;
    ngx_uint_t  seq;

    /*
     * an older generation's worker still collects the answers, on its
     * timer; the new workers' slot of its number is not its own
     */

    poster = (sh->ring.generation == ngx_http_malloc_view.generation)
             ? (unsigned) ngx_worker : NGX_HTTP_MALLOC_RING_NOBODY;

    given->n = 0;

    seq = (ngx_uint_t) ngx_http_malloc_ring_put(&sh->ring, poster,
                                                (long) ngx_pid, wait,
                                                ngx_current_msec, reserve,
                                                given->entries, &given->n);

    /* before the new command may take the place of one of them */
    for (i = 0; i < given->n; i++) {
        given->kinds[i] = sh->cmds[given->entries[i].index].kind;
    }

    if (seq == 0) {
        return 0;
    }

    sh->cmds[seq % NGX_HTTP_MALLOC_RING] = *cmd;

    if (cmd->kind == NGX_HTTP_MALLOC_CMD_ACTIVE) {
        if (sh->prof_active != (ngx_uint_t) cmd->arg) {
            /* on again, however soon: the schedule starts afresh */
            sh->switches++;
        }

        sh->prof_active = cmd->arg;
        sh->active_until = (cmd->arg && cmd->duration)
                           ? ngx_current_msec + cmd->duration : 0;
    }

    if (cmd->kind == NGX_HTTP_MALLOC_CMD_RESET && cmd->arg >= 0) {
        /* new workers come up sampling at this rate too */
        sh->lg_sample = cmd->arg;
    }

    return seq;
}


/*
 * Entries that were held past their time and are used again: each said
 * once, at warn, after the unlock, with what it was and what held it.
 */

static void
ngx_http_malloc_board_given_up(ngx_http_malloc_given_t *given,
    ngx_log_t *log)
{
    size_t  i;
    char    text[NGX_HTTP_MALLOC_RING_TEXT];

    for (i = 0; i < given->n; i++) {
        (void) ngx_http_malloc_ring_given_text(&given->entries[i], text,
                                               sizeof(text));

        ngx_log_error(NGX_LOG_WARN, log, 0,
                      "heap profiling command %s (seq %ui) given up: %s; "
                      "its place among the commands is used again",
                      ngx_http_malloc_board_kind(given->kinds[i]),
                      (ngx_uint_t) given->entries[i].seq, text);
    }
}


/* the name of a command, as its endpoint has it */

static const char *
ngx_http_malloc_board_kind(ngx_uint_t kind)
{
    switch (kind) {

    case NGX_HTTP_MALLOC_CMD_ACTIVE:
        return "prof_active";

    case NGX_HTTP_MALLOC_CMD_DUMP:
        return "prof_dump";

    case NGX_HTTP_MALLOC_CMD_STATS:
        return "stats";

    case NGX_HTTP_MALLOC_CMD_RESET:
        return "prof_reset";

    case NGX_HTTP_MALLOC_CMD_PURGE:
        return "purge";

    case NGX_HTTP_MALLOC_CMD_TRAFFIC:
        return "traffic";

    default:
        return "none";
    }
}


/*
 * Nobody waits for the command any more: a worker that comes to it late
 * skips a dump, and removes a hidden dump it finished too late.
 */

void
ngx_http_malloc_board_close(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq)
{
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);
    ngx_http_malloc_ring_close(&shm->sh->ring, seq);
    ngx_shmtx_unlock(&shm->shpool->mutex);
}


ngx_uint_t
ngx_http_malloc_board_closed(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq)
{
    ngx_uint_t              closed;
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);
    closed = ngx_http_malloc_ring_closed(&shm->sh->ring, seq);
    ngx_shmtx_unlock(&shm->shpool->mutex);

    return closed;
}


/*
 * The next command this worker has to apply: NGX_OK with a copy,
 * NGX_DECLINED when it has left the ring (the worker answers that it
 * missed it), NGX_DONE when there is none.
 */

ngx_int_t
ngx_http_malloc_board_next(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t *seq, ngx_http_malloc_cmd_t *cmd)
{
    int                     rc;
    uint64_t                next;
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    if (!ngx_http_malloc_board_current(mmcf)
        || shm->sh->ring.seq == ngx_http_malloc_view.applied)
    {
        return NGX_DONE;
    }

    ngx_shmtx_lock(&shm->shpool->mutex);

    rc = ngx_http_malloc_ring_next(&shm->sh->ring,
                                   ngx_http_malloc_view.applied, &next);
    if (rc == 1) {
        *cmd = shm->sh->cmds[next % NGX_HTTP_MALLOC_RING];
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    if (rc == -1) {
        return NGX_DONE;
    }

    /* one that fell a ring behind skips what is gone */
    ngx_http_malloc_view.applied = next - 1;
    *seq = next;

    return (rc == 1) ? NGX_OK : NGX_DECLINED;
}


/* writes this worker's result of a command; its poster looks at once */

void
ngx_http_malloc_board_answer(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_result_t *result)
{
    ngx_uint_t                     poster;
    ngx_http_malloc_shm_t         *shm;
    ngx_http_malloc_slot_t        *slot;
    ngx_http_malloc_ring_entry_t  *e;

    ngx_http_malloc_view.applied = result->seq;

    if (!ngx_http_malloc_board_current(mmcf)) {
        return;
    }

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    slot = &shm->sh->slots[ngx_worker];
    shm->sh->ring.peers[ngx_worker].applied = result->seq;
    slot->results[result->seq % NGX_HTTP_MALLOC_RING] = *result;
    slot->prof_active = result->prof_active;
    slot->lg_sample = result->lg_sample;

    e = &shm->sh->ring.entries[result->seq % NGX_HTTP_MALLOC_RING];
    poster = (e->seq == result->seq && !e->closed) ? e->poster
                                                   : NGX_MAX_PROCESSES;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_log_debug3(NGX_LOG_DEBUG_CORE, ngx_cycle->log, 0,
                   "malloc board: worker %ui answered seq %ui, rc %i",
                   ngx_worker, result->seq, result->rc);

    if (poster == ngx_worker) {
        if (!ngx_http_malloc_view.local_ev.posted) {
            ngx_post_event(&ngx_http_malloc_view.local_ev, &ngx_posted_events);
        }

    } else if (poster < mmcf->nwake) {
        ngx_http_malloc_board_signal(mmcf->wake[poster]);
    }
}


/* this worker's figures, for readers that must not wait for it */

void
ngx_http_malloc_board_publish(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t prof_active, ngx_uint_t lg_sample,
    ngx_http_malloc_je_stats_t *stats)
{
    ngx_http_malloc_shm_t   *shm;
    ngx_http_malloc_slot_t  *slot;

    if (!ngx_http_malloc_board_current(mmcf)) {
        return;
    }

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    slot = &shm->sh->slots[ngx_worker];
    slot->prof_active = prof_active;
    slot->lg_sample = lg_sample;
    slot->stats = *stats;
    shm->sh->ring.peers[ngx_worker].published = ngx_current_msec;

    ngx_shmtx_unlock(&shm->shpool->mutex);
}


/*
 * Copies the current generation's workers; a worker has answered once
 * it has seen "seq" (0: once it is up).  *n holds the room in "workers"
 * (which may be NULL to count only) and gets the count.  Returns the
 * number of answers.
 */

ngx_uint_t
ngx_http_malloc_board_workers(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_http_malloc_worker_t *workers, ngx_uint_t *n)
{
    ngx_uint_t                    i, live, answered;
    ngx_msec_t                    age;
    ngx_http_malloc_shm_t        *shm;
    ngx_http_malloc_slot_t       *slot;
    ngx_http_malloc_worker_t     *w;
    ngx_http_malloc_ring_peer_t  *peer;

    shm = ngx_http_malloc_board_shm(mmcf);
    answered = 0;

    ngx_shmtx_lock(&shm->shpool->mutex);

    if (*n > shm->sh->ring.npeers) {
        *n = shm->sh->ring.npeers;
    }

    for (i = 0; i < *n; i++) {
        slot = &shm->sh->slots[i];
        peer = &shm->sh->ring.peers[i];

        live = ngx_http_malloc_ring_live(&shm->sh->ring, i);
        answered += (live && peer->applied >= seq);

        if (workers == NULL) {
            continue;
        }

        w = &workers[i];
        ngx_memzero(w, sizeof(ngx_http_malloc_worker_t));

        w->worker = i;

        if (!live) {
            w->stale = 1;
            continue;
        }

        age = ngx_current_msec - (ngx_msec_t) peer->published;

        w->pid = (ngx_pid_t) peer->pid;
        w->age = ((ngx_msec_int_t) age > 0) ? age : 0;
        w->stale = (w->age > NGX_HTTP_MALLOC_STALE_MS);
        w->prof_active = slot->prof_active;
        w->lg_sample = slot->lg_sample;
        w->stats = slot->stats;
        w->rss = slot->rss;
        w->rss_start = slot->rss_start;
        w->answered = (peer->applied >= seq);
        w->result = slot->results[seq % NGX_HTTP_MALLOC_RING];
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return answered;
}


/*
 * The shared zones of a cycle, in the order of its list: every process of
 * the generation finds the same, at the same addresses (the master mapped
 * them before the fork).  Their count, NGX_HTTP_MALLOC_RSS_ZONES at most;
 * either array may be NULL.
 */

ngx_uint_t
ngx_http_malloc_board_ranges(ngx_cycle_t *cycle,
    ngx_http_malloc_rss_range_t *ranges, ngx_http_malloc_zone_t *zones)
{
    size_t            len;
    ngx_uint_t        i, n;
    ngx_list_part_t  *part;
    ngx_shm_zone_t   *zone;

    n = 0;
    part = &cycle->shared_memory.part;
    zone = part->elts;

    for (i = 0; n < NGX_HTTP_MALLOC_RSS_ZONES; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            zone = part->elts;
            i = 0;
        }

        if (i >= part->nelts || zone[i].shm.addr == NULL) {
            continue;
        }

        if (ranges != NULL) {
            ranges[n].start = (uintptr_t) zone[i].shm.addr;
            ranges[n].size = zone[i].shm.size;
        }

        if (zones != NULL) {
            len = ngx_min(zone[i].shm.name.len, NGX_HTTP_MALLOC_ZONE_NAME);
            ngx_memcpy(zones[n].name, zone[i].shm.name.data, len);
            zones[n].name[len] = '\0';
            zones[n].size = zone[i].shm.size;
        }

        n++;
    }

    return n;
}


/*
 * This worker's memory, read from smaps; its first is its start.  maps:
 * the mappings that grew since, NULL while there is no baseline.
 */

void
ngx_http_malloc_board_publish_rss(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_rss_t *rss, ngx_http_malloc_maps_t *maps)
{
    ngx_http_malloc_shm_t   *shm;
    ngx_http_malloc_slot_t  *slot;

    if (!ngx_http_malloc_board_current(mmcf)) {
        return;
    }

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    slot = &shm->sh->slots[ngx_worker];
    slot->rss = *rss;

    if (slot->rss_start.rss == 0) {
        slot->rss_start = *rss;
    }

    if (maps != NULL) {
        slot->maps = *maps;
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);
}


/*
 * The mappings that grew in a worker, as it last published them; 0 when
 * the slot is not that pid's any more (it exited, or was replaced).
 * Apart from ngx_http_malloc_board_workers(), whose copies of every
 * worker would carry them on the stack.
 */

ngx_uint_t
ngx_http_malloc_board_maps(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t worker, ngx_pid_t pid, ngx_http_malloc_maps_t *maps)
{
    ngx_uint_t              same;
    ngx_http_malloc_shm_t  *shm;

    maps->n = 0;

    if (worker >= NGX_MAX_PROCESSES) {
        return 0;
    }

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    same = ((ngx_pid_t) shm->sh->ring.peers[worker].pid == pid);

    if (same) {
        *maps = shm->sh->slots[worker].maps;
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return same;
}


/*
 * malloc_traffic on: this worker's traffic table, copied into the zone
 * about every second.  A table too small for the rows is made again;
 * the zone too full for it is said once, and the figures stay out.
 */

void
ngx_http_malloc_board_publish_traffic(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_tally_table_t *table, ngx_log_t *log)
{
    size_t                          cap;
    ngx_uint_t                      failed;
    ngx_http_malloc_shm_t          *shm;
    ngx_http_malloc_slot_t         *slot;
    ngx_http_malloc_tally_table_t  *t;

    if (!ngx_http_malloc_board_current(mmcf)) {
        return;
    }

    shm = ngx_http_malloc_board_shm(mmcf);
    failed = 0;

    ngx_shmtx_lock(&shm->shpool->mutex);

    slot = &shm->sh->slots[ngx_worker];
    t = slot->traffic;

    if (t == NULL || t->cap < table->n) {
        if (t != NULL) {
            ngx_slab_free_locked(shm->shpool, t);
        }

        cap = ngx_max(table->n, 16);
        t = ngx_slab_alloc_locked(shm->shpool,
                                  ngx_http_malloc_tally_table_size(cap));
        slot->traffic = t;

        if (t == NULL) {
            failed = !slot->traffic_failed;
            slot->traffic_failed = 1;
            goto done;
        }

        t->cap = cap;
    }

    cap = t->cap;
    ngx_memcpy(t, table, ngx_http_malloc_tally_table_size(table->n));
    t->cap = cap;
    t->generation = shm->sh->ring.generation;

done:

    ngx_shmtx_unlock(&shm->shpool->mutex);

    if (failed) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "the shared zone \"%V\" has no "
                      "room for the traffic figures of worker %ui (%uz "
                      "locations): GET traffic still walks it",
                      &ngx_http_malloc_zone_name, ngx_worker, table->n);
    }
}


/* a worker's published traffic table, copied; NULL: none of this cycle */

ngx_http_malloc_tally_table_t *
ngx_http_malloc_board_traffic(ngx_http_malloc_main_conf_t *mmcf,
    ngx_pool_t *pool, ngx_uint_t worker)
{
    ngx_http_malloc_shm_t          *shm;
    ngx_http_malloc_tally_table_t  *t, *copy;

    shm = ngx_http_malloc_board_shm(mmcf);
    copy = NULL;

    if (worker >= NGX_MAX_PROCESSES) {
        return NULL;
    }

    ngx_shmtx_lock(&shm->shpool->mutex);

    t = shm->sh->slots[worker].traffic;

    if (t != NULL && t->generation == shm->sh->ring.generation) {
        copy = ngx_palloc(pool, ngx_http_malloc_tally_table_size(t->n));

        if (copy != NULL) {
            ngx_memcpy(copy, t, ngx_http_malloc_tally_table_size(t->n));
        }
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return copy;
}


/*
 * The first worker of a generation: the master's allocated bytes as it
 * forked, the previous configuration freed.  The master read its smaps
 * at the end of the read, with both configurations allocated; what the
 * previous one held is free since and still resident in the allocator
 * (until jemalloc purges it), so it moves to allocator_overhead, and the
 * parts add up to the same rss.  At the start the same goes for
 * rss_start, the same reading, which was taken before nginx daemonized:
 * "kernel" (the daemon's totals as its first workers started, or NULL)
 * makes both the daemon's.
 */

void
ngx_http_malloc_board_master_allocated(ngx_http_malloc_main_conf_t *mmcf,
    size_t allocated, ngx_uint_t start, ngx_http_malloc_rss_kernel_t *kernel)
{
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    ngx_http_malloc_board_inherited(&shm->sh->master.rss, allocated);

    if (start) {
        ngx_http_malloc_board_inherited(&shm->sh->master.rss_start,
                                        allocated);
    }

    if (start && kernel != NULL && shm->sh->master.rss.rss != 0) {
        ngx_http_malloc_rss_rebase(&shm->sh->master.rss, kernel);
        shm->sh->master.rss_start = shm->sh->master.rss;
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);
}


static void
ngx_http_malloc_board_inherited(ngx_http_malloc_rss_t *rss, size_t allocated)
{
    if (rss->rss != 0 && rss->allocated > allocated) {
        rss->allocator_overhead += rss->allocated - allocated;
        rss->allocated = allocated;
    }
}


/* in the master, at each configuration read; its first is nginx's start */

void
ngx_http_malloc_board_master_rss(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_rss_t *rss)
{
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    /* the zone lives as long as this master: a binary upgrade starts anew */

    if (shm->sh->master.pid == 0) {
        shm->sh->master.rss_start = *rss;
    }

    /* before the daemon's fork at the start: the readers ask getppid() */
    shm->sh->master.pid = ngx_pid;
    shm->sh->master.rss = *rss;

    ngx_shmtx_unlock(&shm->shpool->mutex);
}


/*
 * The master's memory and the zones of the generation (zones may be
 * NULL); the count of zones.  master->pid 0: nothing recorded.
 */

ngx_uint_t
ngx_http_malloc_board_master(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_master_t *master, ngx_http_malloc_zone_t *zones)
{
    ngx_uint_t              n;
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    if (master != NULL) {
        *master = shm->sh->master;
    }

    n = shm->sh->nzones;

    if (zones != NULL) {
        ngx_memcpy(zones, shm->sh->zones, n * sizeof(ngx_http_malloc_zone_t));
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return n;
}


/* the workers, copied into a pool */

ngx_http_malloc_worker_t *
ngx_http_malloc_board_copy(ngx_http_malloc_main_conf_t *mmcf,
    ngx_pool_t *pool, ngx_uint_t seq, ngx_uint_t *n)
{
    ngx_http_malloc_worker_t  *workers;

    *n = ngx_http_malloc_board_count(mmcf);

    workers = ngx_palloc(pool, (*n + 1) * sizeof(ngx_http_malloc_worker_t));
    if (workers == NULL) {
        return NULL;
    }

    (void) ngx_http_malloc_board_workers(mmcf, seq, workers, n);

    return workers;
}


/* 1 when the worker "pid" of the current generation has seen "seq" */

ngx_uint_t
ngx_http_malloc_board_answered(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_pid_t pid)
{
    ngx_uint_t                    i, ok;
    ngx_http_malloc_shm_t        *shm;
    ngx_http_malloc_ring_peer_t  *peer;

    shm = ngx_http_malloc_board_shm(mmcf);
    ok = 0;

    ngx_shmtx_lock(&shm->shpool->mutex);

    for (i = 0; i < shm->sh->ring.npeers; i++) {
        peer = &shm->sh->ring.peers[i];

        if (ngx_http_malloc_ring_live(&shm->sh->ring, i)
            && peer->pid == (long) pid && peer->applied >= seq)
        {
            ok = 1;
        }
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return ok;
}


ngx_uint_t
ngx_http_malloc_board_count(ngx_http_malloc_main_conf_t *mmcf)
{
    return ngx_http_malloc_board_shm(mmcf)->sh->ring.npeers;
}


ngx_uint_t
ngx_http_malloc_board_generation(ngx_http_malloc_main_conf_t *mmcf)
{
    return (ngx_uint_t) ngx_http_malloc_board_shm(mmcf)->sh->ring.generation;
}


/* this worker belongs to the current generation */

ngx_uint_t
ngx_http_malloc_board_current(ngx_http_malloc_main_conf_t *mmcf)
{
    return ngx_http_malloc_view.registered
           && ngx_http_malloc_view.generation
              == ngx_http_malloc_board_shm(mmcf)->sh->ring.generation;
}


/* the desired state; *remaining: ms left of a duration, 0: none */

ngx_uint_t
ngx_http_malloc_board_desired(ngx_http_malloc_main_conf_t *mmcf,
    ngx_msec_t *remaining)
{
    ngx_uint_t              active;
    ngx_msec_t              until;
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);
    active = shm->sh->prof_active;
    until = shm->sh->active_until;
    ngx_shmtx_unlock(&shm->shpool->mutex);

    if (remaining != NULL) {
        *remaining = (active && until != 0
                      && (ngx_msec_int_t) (until - ngx_current_msec) > 0)
                     ? until - ngx_current_msec : 0;
    }

    return active;
}


/* the sampling rate of the last reset, or -1 */

ngx_int_t
ngx_http_malloc_board_lg_sample(ngx_http_malloc_main_conf_t *mmcf)
{
    return ngx_http_malloc_board_shm(mmcf)->sh->lg_sample;
}


/*
 * Profiling turned on with a duration turns itself off: the first worker
 * whose timer sees the time up posts the change for all, as an operator
 * would; nobody waits for the answers.  1 when this worker posted it.
 */

ngx_uint_t
ngx_http_malloc_board_expire(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    ngx_uint_t               seq;
    ngx_http_malloc_shm_t   *shm;
    ngx_http_malloc_cmd_t    cmd;
    ngx_http_malloc_given_t  given;

    shm = ngx_http_malloc_board_shm(mmcf);

    if (!shm->sh->prof_active || shm->sh->active_until == 0) {
        return 0;
    }

    ngx_memzero(&cmd, sizeof(ngx_http_malloc_cmd_t));
    cmd.kind = NGX_HTTP_MALLOC_CMD_ACTIVE;
    cmd.arg = 0;

    seq = 0;
    given.n = 0;

    ngx_shmtx_lock(&shm->shpool->mutex);

    /* not yet, or the ring is full: the next second's timer again */

    if (shm->sh->prof_active && shm->sh->active_until != 0
        && (ngx_msec_int_t) (shm->sh->active_until - ngx_current_msec) <= 0)
    {
        seq = ngx_http_malloc_board_put(shm->sh, &cmd, 0, 0, &given);
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_http_malloc_board_given_up(&given, log);

    if (seq == 0) {
        return 0;
    }

    ngx_log_debug1(NGX_LOG_DEBUG_CORE, log, 0,
                   "malloc board: duration over, posted seq %ui", seq);

    ngx_http_malloc_board_wake(mmcf);

    return 1;
}


/*
 * 1 for the first worker of the current generation to ask: it records
 * the generation (the heap it inherited is the master's after the
 * reload).  A worker respawned later is not the first.
 */

ngx_uint_t
ngx_http_malloc_board_first(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_uint_t              first;
    ngx_http_malloc_shm_t  *shm;

    if (!ngx_http_malloc_board_current(mmcf)) {
        return 0;
    }

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    first = (shm->sh->recorded != shm->sh->ring.generation);
    shm->sh->recorded = shm->sh->ring.generation;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return first;
}


void
ngx_http_malloc_board_record(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_gen_t *gen)
{
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    gen->generation = shm->sh->ring.generation;
    shm->sh->gens[gen->generation % NGX_HTTP_MALLOC_GENERATIONS] = *gen;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_log_debug2(NGX_LOG_DEBUG_CORE, ngx_cycle->log, 0,
                   "malloc board: generation %ui, master's heap %uz bytes",
                   gen->generation, gen->allocated);
}


/* the generations recorded, newest first; their count */

ngx_uint_t
ngx_http_malloc_board_generations(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_gen_t *gens)
{
    ngx_uint_t              i, n, g;
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);
    n = 0;

    ngx_shmtx_lock(&shm->shpool->mutex);

    for (i = 0; i < NGX_HTTP_MALLOC_GENERATIONS; i++) {
        g = shm->sh->recorded - i;

        if (g == 0 || g > shm->sh->recorded) {
            break;
        }

        if (shm->sh->gens[g % NGX_HTTP_MALLOC_GENERATIONS].generation == g) {
            gens[n++] = shm->sh->gens[g % NGX_HTTP_MALLOC_GENERATIONS];
        }
    }

    ngx_shmtx_unlock(&shm->shpool->mutex);

    return n;
}


void *
ngx_http_malloc_board_lock(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t part)
{
    ngx_http_malloc_shm_t  *shm;

    shm = ngx_http_malloc_board_shm(mmcf);

    ngx_shmtx_lock(&shm->shpool->mutex);

    switch (part) {

    case NGX_HTTP_MALLOC_PART_WATCH:
        return &shm->sh->watch;

    case NGX_HTTP_MALLOC_PART_SCHEDULE:
        return &shm->sh->schedule;

    default: /* NGX_HTTP_MALLOC_PART_EXPORT */
        return &shm->sh->export;
    }
}


void
ngx_http_malloc_board_unlock(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_shmtx_unlock(&ngx_http_malloc_board_shm(mmcf)->shpool->mutex);
}


ngx_uint_t
ngx_http_malloc_board_switches(ngx_http_malloc_main_conf_t *mmcf)
{
    return ngx_http_malloc_board_shm(mmcf)->sh->switches;
}

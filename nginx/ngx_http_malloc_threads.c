
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The module's own thread pool, per worker.  Threads start on the first
 * task (an idle module has none), at most as many as malloc_threads says.
 * A finished task is queued and the worker's eventfd is written; the
 * event loop then runs each task's "done".  Builds of profiles (long,
 * and asked for by anyone who may read) leave one thread to the rest:
 * with two threads or more, a heap dump or a read of smaps never waits
 * behind them.  Owns: the threads, the two queues, the eventfd.  Calls:
 * nothing of the module.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_channel.h>

#include <pthread.h>
#include <sys/eventfd.h>

#include "ngx_http_malloc_threads.h"


static void *ngx_http_malloc_threads_main(void *data);
static ngx_int_t ngx_http_malloc_threads_start(ngx_log_t *log);
static void ngx_http_malloc_threads_finished(ngx_event_t *ev);
static ngx_http_malloc_task_t *ngx_http_malloc_threads_take(void);


#define NGX_HTTP_MALLOC_THREADS_MAX  16


/* per worker process, as nginx keeps its own thread pools */
typedef struct {
    pthread_mutex_t             mtx;        /* guards the rest but max,
                                               running, fd and tid */
    pthread_cond_t              cond;
    int                         fd;         /* the eventfd */
    ngx_uint_t                  max;
    ngx_uint_t                  running;
    ngx_uint_t                  idle;
    ngx_uint_t                  builds;     /* builds running */
    ngx_uint_t                  stop;
    pthread_t                   tid[NGX_HTTP_MALLOC_THREADS_MAX];
    ngx_http_malloc_task_t     *todo;
    ngx_http_malloc_task_t    **todo_last;
    ngx_http_malloc_task_t     *done;
} ngx_http_malloc_pool_t;


static ngx_http_malloc_pool_t  ngx_http_malloc_pool = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, 0, 0, 0, 0, 0,
    { 0 }, NULL, &ngx_http_malloc_pool.todo, NULL
};


ngx_int_t
ngx_http_malloc_threads_init(ngx_cycle_t *cycle, ngx_uint_t threads)
{
    ngx_http_malloc_pool.max = 0;

    if (threads == 0) {
        return NGX_OK;
    }

    ngx_http_malloc_pool.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

    if (ngx_http_malloc_pool.fd == -1) {
        ngx_log_error(NGX_LOG_ERR, cycle->log, ngx_errno,
                      "eventfd() failed: heap dumps and profiles are "
                      "built in the event loop");
        return NGX_OK;
    }

    if (ngx_add_channel_event(cycle, ngx_http_malloc_pool.fd,
                              NGX_READ_EVENT,
                              ngx_http_malloc_threads_finished)
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_ERR, cycle->log, 0,
                      "cannot watch the heap profiling threads' eventfd: "
                      "heap dumps and profiles are built in the event loop");
        (void) close(ngx_http_malloc_pool.fd);
        ngx_http_malloc_pool.fd = -1;
        return NGX_OK;
    }

    ngx_http_malloc_pool.max = ngx_min(threads, NGX_HTTP_MALLOC_THREADS_MAX);

    return NGX_OK;
}


/*
 * At the worker's exit, before the module is unloaded: each thread ends
 * its task in hand, then stops.  The tasks' "done" do not run.
 */

void
ngx_http_malloc_threads_exit(void)
{
    ngx_uint_t  i;

    (void) pthread_mutex_lock(&ngx_http_malloc_pool.mtx);
    ngx_http_malloc_pool.stop = 1;
    (void) pthread_cond_broadcast(&ngx_http_malloc_pool.cond);
    (void) pthread_mutex_unlock(&ngx_http_malloc_pool.mtx);

    for (i = 0; i < ngx_http_malloc_pool.running; i++) {
        (void) pthread_join(ngx_http_malloc_pool.tid[i], NULL);
    }

    ngx_http_malloc_pool.running = 0;
    ngx_http_malloc_pool.max = 0;
}


ngx_int_t
ngx_http_malloc_threads_post(ngx_http_malloc_task_t *task, ngx_log_t *log)
{
    if (ngx_http_malloc_pool.max == 0) {
        return NGX_DECLINED;
    }

    if (ngx_http_malloc_threads_start(log) != NGX_OK) {
        return NGX_DECLINED;
    }

    task->next = NULL;

    (void) pthread_mutex_lock(&ngx_http_malloc_pool.mtx);

    *ngx_http_malloc_pool.todo_last = task;
    ngx_http_malloc_pool.todo_last = &task->next;

    /* an idle thread may be one that waits for a build's turn */
    (void) pthread_cond_broadcast(&ngx_http_malloc_pool.cond);
    (void) pthread_mutex_unlock(&ngx_http_malloc_pool.mtx);

    ngx_log_debug2(NGX_LOG_DEBUG_CORE, log, 0,
                   "malloc thread task %p posted, build %ui", task,
                   task->build);

    return NGX_OK;
}


/* another thread when every running one is busy, up to the maximum */

static ngx_int_t
ngx_http_malloc_threads_start(ngx_log_t *log)
{
    int         err;
    ngx_uint_t  idle;

    (void) pthread_mutex_lock(&ngx_http_malloc_pool.mtx);
    idle = ngx_http_malloc_pool.idle;
    (void) pthread_mutex_unlock(&ngx_http_malloc_pool.mtx);

    if (ngx_http_malloc_pool.running > 0
        && (idle > 0
            || ngx_http_malloc_pool.running >= ngx_http_malloc_pool.max))
    {
        return NGX_OK;
    }

    err = pthread_create(
              &ngx_http_malloc_pool.tid[ngx_http_malloc_pool.running],
              NULL, ngx_http_malloc_threads_main, NULL);

    if (err != 0) {
        ngx_log_error(NGX_LOG_ERR, log, err, "pthread_create() failed");
        return ngx_http_malloc_pool.running ? NGX_OK : NGX_ERROR;
    }

    ngx_http_malloc_pool.running++;

    ngx_log_debug1(NGX_LOG_DEBUG_CORE, log, 0,
                   "malloc thread started, %ui running",
                   ngx_http_malloc_pool.running);

    return NGX_OK;
}


static void *
ngx_http_malloc_threads_main(void *data)
{
    uint64_t                 one;
    sigset_t                 set;
    ngx_http_malloc_task_t  *task;

    /* signals are the event loop's */
    (void) sigfillset(&set);
    (void) pthread_sigmask(SIG_BLOCK, &set, NULL);

    one = 1;

    for ( ;; ) {
        (void) pthread_mutex_lock(&ngx_http_malloc_pool.mtx);

        for ( ;; ) {
            if (ngx_http_malloc_pool.stop) {
                (void) pthread_mutex_unlock(&ngx_http_malloc_pool.mtx);
                return NULL;
            }

            task = ngx_http_malloc_threads_take();

            if (task != NULL) {
                break;
            }

            ngx_http_malloc_pool.idle++;
            (void) pthread_cond_wait(&ngx_http_malloc_pool.cond,
                                     &ngx_http_malloc_pool.mtx);
            ngx_http_malloc_pool.idle--;
        }

        ngx_http_malloc_pool.builds += task->build;

        (void) pthread_mutex_unlock(&ngx_http_malloc_pool.mtx);

        task->work(task->data);

        (void) pthread_mutex_lock(&ngx_http_malloc_pool.mtx);
        task->next = ngx_http_malloc_pool.done;
        ngx_http_malloc_pool.done = task;

        if (task->build) {
            /* another build may have its turn now */
            ngx_http_malloc_pool.builds--;
            (void) pthread_cond_broadcast(&ngx_http_malloc_pool.cond);
        }

        (void) pthread_mutex_unlock(&ngx_http_malloc_pool.mtx);

        /*
         * EAGAIN: the counter is set already, the loop will look; nothing
         * else can fail on an eventfd of our own, and a thread logs nothing
         */

        if (write(ngx_http_malloc_pool.fd, &one, sizeof(one)) == -1) {
            continue;
        }
    }

    return NULL;
}


/*
 * With the mutex held: the first task that may run now, out of the queue;
 * a build only while fewer than all threads but one run builds
 */

static ngx_http_malloc_task_t *
ngx_http_malloc_threads_take(void)
{
    ngx_uint_t               builds;
    ngx_http_malloc_task_t  *task, **prev;

    builds = (ngx_http_malloc_pool.max > 1) ? ngx_http_malloc_pool.max - 1
                                            : 1;

    for (prev = &ngx_http_malloc_pool.todo;
         *prev != NULL;
         prev = &(*prev)->next)
    {
        task = *prev;

        if (task->build && ngx_http_malloc_pool.builds >= builds) {
            continue;
        }

        *prev = task->next;

        if (ngx_http_malloc_pool.todo_last == &task->next) {
            ngx_http_malloc_pool.todo_last = prev;
        }

        return task;
    }

    return NULL;
}


static void
ngx_http_malloc_threads_finished(ngx_event_t *ev)
{
    uint64_t                 n;
    ngx_connection_t        *c;
    ngx_http_malloc_task_t  *task, *next, *order;

    c = ev->data;

    if (read(c->fd, &n, sizeof(n)) == -1 && ngx_errno != NGX_EAGAIN) {
        ngx_log_error(NGX_LOG_ALERT, ev->log, ngx_errno,
                      "read() from eventfd failed");
    }

    (void) pthread_mutex_lock(&ngx_http_malloc_pool.mtx);
    task = ngx_http_malloc_pool.done;
    ngx_http_malloc_pool.done = NULL;
    (void) pthread_mutex_unlock(&ngx_http_malloc_pool.mtx);

    /* in the order they finished */

    for (order = NULL; task != NULL; task = next) {
        next = task->next;
        task->next = order;
        order = task;
    }

    for (task = order; task != NULL; task = next) {
        next = task->next;

        ngx_log_debug1(NGX_LOG_DEBUG_CORE, ev->log, 0,
                       "malloc thread task %p done", task);

        task->done(task->data);
    }
}

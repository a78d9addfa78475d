/*
 * The worker pool: the daemon's struct scsi_executor.
 *
 * submit() (loop thread) appends a job to the run queue and wakes a worker
 * when the workers awake are too few for the queue (wake_needed).
 * The core hands over at most executor.capacity command jobs at a time and
 * keeps the rest ranked by priority (sched/dispatch.c), so this queue stays
 * short and in the core's order.
 * A worker runs job->work() (backend I/O, possibly slow), appends the job to
 * the completion list under a second mutex and wakes the loop with
 * ev_async_send().  The loop's ev_async callback takes the whole list and
 * calls each job->done() on the loop thread, in completion order.
 *
 * A job that can be done without waiting (scsi_io_job.work_nowait: a read
 * of bytes in the page cache) is done in submit() on the loop thread
 * instead, which saves the two wake-ups; its done() is fed to the same
 * ev_async watcher (ev_feed_event, libev(3) "GENERIC EVENT WATCHERS"), so it
 * runs after the callback that submitted returns, in the same loop
 * iteration, before the transport's ev_prepare flush sends the response.
 *
 * A job the backend can start asynchronously (scsi_io_job.work_async: a
 * librbd aio call, backends/be_rbd.c) is started in submit_async() on the
 * loop thread; the backend's completion thread hands it to complete(),
 * which feeds the same completion list the workers do.
 *
 * post() (any thread) has a job's done() run on the loop thread without
 * work: how the core hears of an event on another thread (a question from
 * another node, protocol/scsi/spc/spc_pr_peer.c).
 *
 * So backend calls that may wait never run on the loop thread, and done()
 * never runs on a worker: the SCSI core needs no locks for its own state.
 * Jobs carry their own link (scsi_io_job.next), so the pool allocates
 * nothing per job.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"

/* How long a job may stay queued while a worker sleeps: a few short jobs' time. */
#define LATE_WAKE_S 100e-6

struct job_list {
	struct scsi_io_job *head;
	struct scsi_io_job **tail;
};

struct sbce_workers {
	struct scsi_executor executor; /* first: the core calls executor.submit */
	struct ev_loop *loop;
	ev_async wakeup;
	ev_timer late_wake;          /* wakes a worker for jobs left queued (wake_needed) */

	pthread_mutex_t queue_lock;
	pthread_cond_t queue_cond;
	struct job_list queue;       /* submitted, not yet taken by a worker */
	unsigned queued;             /* jobs on queue */
	unsigned idle;               /* workers waiting on queue_cond */
	unsigned wakes_pending;      /* signals sent that no worker has taken yet */
	unsigned long taken;         /* jobs workers have taken from queue, ever */
	unsigned long taken_seen;    /* taken when late_wake was started */
	bool stopping;

	pthread_mutex_t done_lock;
	struct job_list done;        /* work() finished, done() not yet called */
	struct job_list posted;      /* [done_lock] posted (workers_post): done() not yet called */
	struct job_list done_now;    /* loop thread only: work_nowait() did it, done() not yet called */

	unsigned long in_flight;     /* loop thread only */
	pthread_t *threads;
	unsigned count;
};

static void list_init(struct job_list *l)
{
	l->head = NULL;
	l->tail = &l->head;
}

static void list_append(struct job_list *l, struct scsi_io_job *job)
{
	job->next = NULL;
	*l->tail = job;
	l->tail = &job->next;
}

static struct sbce_workers *from_executor(struct scsi_executor *ex)
{
	return (struct sbce_workers *)((char *)ex - offsetof(struct sbce_workers, executor));
}

/*
 * Under queue_lock: whether one more worker must be woken for the queue.
 * A worker that is awake takes the next job when its own is done, so a
 * sleeping one is woken only when the queue is longer than the workers
 * awake (or about to be): a stream of short jobs (a buffered write of a
 * few KiB) is then served by one worker that never sleeps between them,
 * where a wake-up per job cost two context switches, the largest cost of
 * a 4 KiB write in perf profiles.  A job still waits behind at most one
 * job per awake worker, the bound executor.capacity is chosen for; and
 * when those jobs are slow (durable writes, reads from the disk) and the
 * queue has not moved for LATE_WAKE_S, the late_wake timer wakes sleeping
 * workers for it, so no job waits behind a slow one for longer.
 */
static bool wake_needed(const struct sbce_workers *w)
{
	unsigned awake = w->count - w->idle + w->wakes_pending;

	return w->idle > w->wakes_pending && w->queued > awake;
}

static void workers_submit(struct scsi_executor *ex, struct scsi_io_job *job)
{
	struct sbce_workers *w = from_executor(ex);
	bool wake;

	w->in_flight++;
	if (job->work_nowait && job->work_nowait(job)) {
		list_append(&w->done_now, job);
		ev_feed_event(w->loop, &w->wakeup, EV_ASYNC);
		return;
	}
	pthread_mutex_lock(&w->queue_lock);
	list_append(&w->queue, job);
	w->queued++;
	wake = wake_needed(w);
	if (wake)
		w->wakes_pending++;
	else if (!ev_is_active(&w->late_wake))
		w->taken_seen = w->taken;
	pthread_mutex_unlock(&w->queue_lock);
	/* After the unlock: a woken worker does not go straight back to sleep on the mutex. */
	if (wake)
		pthread_cond_signal(&w->queue_cond);
	else if (!ev_is_active(&w->late_wake))
		ev_timer_start(w->loop, &w->late_wake);
}

/* Loop thread: a job started asynchronously holds no worker; complete() brings it back. */
static bool workers_submit_async(struct scsi_executor *ex, struct scsi_io_job *job)
{
	struct sbce_workers *w = from_executor(ex);

	job->executor = ex;
	w->in_flight++;
	if (job->work_async(job))
		return true;
	w->in_flight--;
	return false;
}

/* Any thread: as a worker ends a job. */
static void workers_complete(struct scsi_executor *ex, struct scsi_io_job *job)
{
	struct sbce_workers *w = from_executor(ex);

	pthread_mutex_lock(&w->done_lock);
	list_append(&w->done, job);
	pthread_mutex_unlock(&w->done_lock);
	ev_async_send(w->loop, &w->wakeup);
}

/* Any thread: done() on the loop thread, for a job that did no work and is not counted in flight. */
static void workers_post(struct scsi_executor *ex, struct scsi_io_job *job)
{
	struct sbce_workers *w = from_executor(ex);

	pthread_mutex_lock(&w->done_lock);
	list_append(&w->posted, job);
	pthread_mutex_unlock(&w->done_lock);
	ev_async_send(w->loop, &w->wakeup);
}

/*
 * Loop thread, LATE_WAKE_S after a submit that woke nobody: if jobs are
 * still queued and no worker has taken one since, the awake workers are
 * held up in slow jobs, and a sleeping worker is woken for each queued job.
 * If they took some, the queue is moving: look again LATE_WAKE_S later.
 */
static void late_wake_cb(struct ev_loop *loop, ev_timer *timer, int revents)
{
	struct sbce_workers *w = timer->data;
	unsigned wakes = 0;
	bool again = false;

	(void)revents;
	pthread_mutex_lock(&w->queue_lock);
	if (w->queued && w->taken == w->taken_seen) {
		wakes = w->idle - w->wakes_pending;
		if (wakes > w->queued)
			wakes = w->queued;
		w->wakes_pending += wakes;
	} else if (w->queued) {
		w->taken_seen = w->taken;
		again = true;
	}
	pthread_mutex_unlock(&w->queue_lock);
	while (wakes--)
		pthread_cond_signal(&w->queue_cond);
	if (again)
		ev_timer_start(loop, timer);
}

static void *worker_main(void *arg)
{
	struct sbce_workers *w = arg;

	for (;;) {
		struct scsi_io_job *job;

		pthread_mutex_lock(&w->queue_lock);
		while (!w->queue.head && !w->stopping) {
			w->idle++;
			pthread_cond_wait(&w->queue_cond, &w->queue_lock);
			w->idle--;
			if (w->wakes_pending)
				w->wakes_pending--;
		}
		job = w->queue.head;
		if (!job) { /* stopping, and the queue is drained */
			pthread_mutex_unlock(&w->queue_lock);
			return NULL;
		}
		w->queue.head = job->next;
		if (!w->queue.head)
			w->queue.tail = &w->queue.head;
		w->queued--;
		w->taken++;
		pthread_mutex_unlock(&w->queue_lock);

		job->work(job);
		workers_complete(&w->executor, job);
	}
}

/* Loop thread: calls done() for the jobs of list, taken whole. */
static void run_list(struct sbce_workers *w, struct scsi_io_job *job)
{
	while (job) {
		struct scsi_io_job *next = job->next;

		job->next = NULL;
		w->in_flight--;
		job->done(job); /* may submit new jobs */
		job = next;
	}
}

/* Loop thread: calls done() for every finished job. */
static void run_completions(struct sbce_workers *w)
{
	struct scsi_io_job *job, *posted;

	/* Those done at once first: they are the first whose done() was made possible. */
	while ((job = w->done_now.head) != NULL) {
		list_init(&w->done_now);
		run_list(w, job);
	}
	pthread_mutex_lock(&w->done_lock);
	job = w->done.head;
	list_init(&w->done);
	posted = w->posted.head;
	list_init(&w->posted);
	pthread_mutex_unlock(&w->done_lock);
	run_list(w, job);
	while (posted) {
		job = posted;
		posted = job->next;
		job->next = NULL;
		job->done(job);
	}
}

static void wakeup_cb(struct ev_loop *loop, ev_async *watcher, int revents)
{
	(void)loop;
	(void)revents;
	run_completions(watcher->data);
}

struct sbce_workers *sbce_workers_create(struct ev_loop *loop, unsigned count, char *err, size_t errlen)
{
	struct sbce_workers *w = calloc(1, sizeof(*w));
	sigset_t all, old;

	if (!w || !(w->threads = calloc(count ? count : 1, sizeof(*w->threads)))) {
		snprintf(err, errlen, "out of memory");
		free(w);
		return NULL;
	}
	w->executor.submit = workers_submit;
	w->executor.submit_async = workers_submit_async;
	w->executor.complete = workers_complete;
	w->executor.post = workers_post;
	/*
	 * Two command jobs per thread at most: enough to keep every thread busy
	 * while the loop hands out the next, few enough that a job the core
	 * ranks first (sched/dispatch.c) waits behind at most one per thread.
	 */
	w->executor.capacity = 2 * (count ? count : 1);
	w->loop = loop;
	list_init(&w->queue);
	list_init(&w->done);
	list_init(&w->posted);
	list_init(&w->done_now);
	pthread_mutex_init(&w->queue_lock, NULL);
	pthread_cond_init(&w->queue_cond, NULL);
	pthread_mutex_init(&w->done_lock, NULL);
	ev_async_init(&w->wakeup, wakeup_cb);
	w->wakeup.data = w;
	ev_async_start(loop, &w->wakeup);
	ev_timer_init(&w->late_wake, late_wake_cb, LATE_WAKE_S, 0.);
	w->late_wake.data = w;

	/* Workers block every signal, so SIGTERM and friends reach the loop thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (w->count = 0; w->count < count; w->count++) {
		int rc = pthread_create(&w->threads[w->count], NULL, worker_main, w);

		if (rc != 0) {
			snprintf(err, errlen, "cannot start worker thread %u: %s", w->count, strerror(rc));
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			sbce_workers_destroy(w);
			return NULL;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return w;
}

struct scsi_executor *sbce_workers_executor(struct sbce_workers *w)
{
	return w ? &w->executor : NULL;
}

unsigned long sbce_workers_in_flight(const struct sbce_workers *w)
{
	return w->in_flight;
}

/* Whether a posted job waits for its done(). */
static bool posted_pending(struct sbce_workers *w)
{
	bool pending;

	pthread_mutex_lock(&w->done_lock);
	pending = w->posted.head != NULL;
	pthread_mutex_unlock(&w->done_lock);
	return pending;
}

void sbce_workers_destroy(struct sbce_workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->queue_lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->queue_cond);
	pthread_mutex_unlock(&w->queue_lock);
	for (unsigned i = 0; i < w->count; i++)
		pthread_join(w->threads[i], NULL);
	/*
	 * Jobs a done() submits now run on this thread: nothing else is left to
	 * run them.  Jobs started asynchronously come back from the backend's
	 * thread (complete()): wait for them.  Posted jobs run too (the caller
	 * made sure no more are posted).
	 */
	while (w->in_flight || posted_pending(w)) {
		run_completions(w);
		while (w->queue.head) {
			struct scsi_io_job *job = w->queue.head;

			w->queue.head = job->next;
			if (!w->queue.head)
				w->queue.tail = &w->queue.head;
			job->work(job);
			list_append(&w->done, job);
		}
		pthread_mutex_lock(&w->done_lock);
		bool idle = !w->done.head;
		pthread_mutex_unlock(&w->done_lock);
		if (idle && !w->done_now.head && w->in_flight)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	ev_async_stop(w->loop, &w->wakeup);
	ev_timer_stop(w->loop, &w->late_wake);
	pthread_mutex_destroy(&w->queue_lock);
	pthread_cond_destroy(&w->queue_cond);
	pthread_mutex_destroy(&w->done_lock);
	free(w->threads);
	free(w);
}

/*
 * workers.c: the executor contract of protocol/scsi/include/scsi.h: work() runs on a
 * worker thread, never the loop thread; done() runs on the loop thread, once
 * per job; jobs submitted from done() run too; destroy finishes what is queued;
 * a job whose work_nowait() does it is done on the loop thread, and its
 * done() comes after submit() returns, never inside it; a job queued
 * behind a job that blocks is run by another worker all the same; a job
 * started asynchronously (submit_async) is done on the loop thread once
 * another thread completes it, and destroy waits for it; a job posted
 * from another thread has its done() on the loop thread, with no work().
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon.h"

#define JOBS 2000

struct test_job {
	struct scsi_io_job job;
	pthread_t worked_on;
	int done_calls;
	int chain; /* submit this many follow-ups from done() */
	unsigned seed;
	bool can_nowait;    /* work_nowait() does it */
	bool nowait_did_it;
};

static bool in_submit; /* the test is inside ex->submit() */

static pthread_t loop_thread;
static struct ev_loop *loop;
static struct scsi_executor *ex;
static int done_total;
static int expected_total;

static void work(struct scsi_io_job *job)
{
	struct test_job *t = (struct test_job *)job;

	t->worked_on = pthread_self();
	if (rand_r(&t->seed) % 7 == 0)
		usleep(10);
}

static void done(struct scsi_io_job *job)
{
	struct test_job *t = (struct test_job *)job;

	ck_assert(pthread_equal(pthread_self(), loop_thread));
	ck_assert(!in_submit);
	ck_assert(t->nowait_did_it == pthread_equal(t->worked_on, loop_thread));
	t->done_calls++;
	done_total++;
	if (t->chain > 0) {
		t->chain--;
		ex->submit(ex, &t->job);
		return;
	}
	if (done_total == expected_total)
		ev_break(loop, EVBREAK_ALL);
}

static struct test_job *make_jobs(int n, int chain)
{
	struct test_job *jobs = calloc((size_t)n, sizeof(*jobs));

	for (int i = 0; i < n; i++) {
		jobs[i].job.work = work;
		jobs[i].job.done = done;
		jobs[i].chain = chain;
		jobs[i].seed = (unsigned)i;
	}
	return jobs;
}

/* Even jobs can be done at once, odd ones would wait. */
static bool work_nowait(struct scsi_io_job *job)
{
	struct test_job *t = (struct test_job *)job;

	ck_assert(pthread_equal(pthread_self(), loop_thread));
	if (!t->can_nowait)
		return false;
	t->worked_on = pthread_self();
	t->nowait_did_it = true;
	return true;
}

START_TEST(nowait_jobs_done_on_loop_after_submit)
{
	char err[128];
	struct sbce_workers *w;
	struct test_job *jobs = make_jobs(200, 2);

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 2, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	ex = sbce_workers_executor(w);
	done_total = 0;
	expected_total = 200 * 3;
	for (int i = 0; i < 200; i++) {
		jobs[i].job.work_nowait = work_nowait;
		jobs[i].can_nowait = i % 2 == 0;
		in_submit = true;
		ex->submit(ex, &jobs[i].job);
		in_submit = false;
	}
	ck_assert_uint_eq(sbce_workers_in_flight(w), 200);
	ev_run(loop, 0);
	ck_assert_int_eq(done_total, 600);
	ck_assert_uint_eq(sbce_workers_in_flight(w), 0);
	for (int i = 0; i < 200; i++) {
		ck_assert_int_eq(jobs[i].done_calls, 3);
		ck_assert(jobs[i].nowait_did_it == (i % 2 == 0));
	}
	sbce_workers_destroy(w);
	ev_loop_destroy(loop);
	free(jobs);
}
END_TEST

START_TEST(work_on_workers_done_on_loop)
{
	char err[128];
	struct sbce_workers *w;
	struct test_job *jobs = make_jobs(JOBS, 0);

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 4, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	ex = sbce_workers_executor(w);
	done_total = 0;
	expected_total = JOBS;
	for (int i = 0; i < JOBS; i++)
		ex->submit(ex, &jobs[i].job);
	ck_assert_uint_eq(sbce_workers_in_flight(w), JOBS);
	ev_run(loop, 0);
	ck_assert_int_eq(done_total, JOBS);
	ck_assert_uint_eq(sbce_workers_in_flight(w), 0);
	for (int i = 0; i < JOBS; i++)
		ck_assert_int_eq(jobs[i].done_calls, 1);
	sbce_workers_destroy(w);
	ev_loop_destroy(loop);
	free(jobs);
}
END_TEST

/* done() may submit again (the core chains I/O phases this way). */
START_TEST(resubmit_from_done)
{
	char err[128];
	struct sbce_workers *w;
	struct test_job *jobs = make_jobs(10, 5);

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 2, err, sizeof(err));
	ex = sbce_workers_executor(w);
	done_total = 0;
	expected_total = 10 * 6;
	for (int i = 0; i < 10; i++)
		ex->submit(ex, &jobs[i].job);
	ev_run(loop, 0);
	ck_assert_int_eq(done_total, 60);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(jobs[i].done_calls, 6);
	sbce_workers_destroy(w);
	ev_loop_destroy(loop);
	free(jobs);
}
END_TEST

/* Destroy without running the loop: queued jobs still run on the workers, and their done() is called. */
START_TEST(destroy_finishes_queued_jobs)
{
	char err[128];
	struct sbce_workers *w;
	struct test_job *jobs = make_jobs(100, 0);

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 3, err, sizeof(err));
	ex = sbce_workers_executor(w);
	done_total = 0;
	expected_total = -1;
	for (int i = 0; i < 100; i++)
		ex->submit(ex, &jobs[i].job);
	sbce_workers_destroy(w);
	ck_assert_int_eq(done_total, 100);
	ev_loop_destroy(loop);
	free(jobs);
}
END_TEST

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void blocked_work(struct scsi_io_job *job)
{
	(void)job;
	pthread_mutex_lock(&gate_lock);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

static void quick_work(struct scsi_io_job *job)
{
	(void)job;
}

static int quick_done_calls;

static void quick_done(struct scsi_io_job *job)
{
	(void)job;
	quick_done_calls++;
	ev_break(loop, EVBREAK_ALL);
}

static void blocked_done(struct scsi_io_job *job)
{
	(void)job;
	ev_break(loop, EVBREAK_ALL);
}

static void give_up(struct ev_loop *l, ev_timer *t, int revents)
{
	(void)t;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

/*
 * Workers wake lazily (a job may wait for an awake worker), but never
 * behind a job that does not end: the second job is done while the
 * first still blocks its worker.
 */
START_TEST(queued_job_not_held_behind_blocked_one)
{
	char err[128];
	struct sbce_workers *w;
	struct scsi_io_job blocked = { .work = blocked_work, .done = blocked_done };
	struct scsi_io_job quick = { .work = quick_work, .done = quick_done };
	ev_timer timeout;

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 2, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	ex = sbce_workers_executor(w);
	gate_open = false;
	quick_done_calls = 0;
	ex->submit(ex, &blocked);
	usleep(20000); /* a worker has taken it and is blocked in it */
	ex->submit(ex, &quick);
	ev_timer_init(&timeout, give_up, 5., 0.);
	ev_timer_start(loop, &timeout);
	ev_run(loop, 0);
	ck_assert_int_eq(quick_done_calls, 1);
	pthread_mutex_lock(&gate_lock);
	gate_open = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	ev_run(loop, 0); /* the blocked job's done() */
	ev_timer_stop(loop, &timeout);
	sbce_workers_destroy(w);
	ev_loop_destroy(loop);
}
END_TEST

/* ---- asynchronous jobs (scsi_executor.submit_async / complete) ---- */

static void *backend_thread(void *arg)
{
	struct test_job *t = arg;

	usleep(200 + (useconds_t)(t->seed % 7) * 300);
	t->job.executor->complete(t->job.executor, &t->job);
	return NULL;
}

/* Odd jobs start "in the backend" (a thread that completes them later); even ones do not start. */
static bool work_async(struct scsi_io_job *job)
{
	struct test_job *t = (struct test_job *)job;
	pthread_t th;

	ck_assert(pthread_equal(pthread_self(), loop_thread));
	ck_assert_ptr_eq(job->executor, ex);
	if (t->seed % 2 == 0)
		return false;
	t->worked_on = pthread_self(); /* started on the loop thread, like a nowait job */
	t->nowait_did_it = true;
	ck_assert_int_eq(pthread_create(&th, NULL, backend_thread, t), 0);
	pthread_detach(th);
	return true;
}

/* Submits job as the core's dispatch does: asynchronously when it starts so, else to the workers. */
static void submit_like_dispatch(struct test_job *t)
{
	t->job.work_async = work_async;
	in_submit = true;
	if (!ex->submit_async(ex, &t->job))
		ex->submit(ex, &t->job);
	in_submit = false;
}

START_TEST(async_jobs_done_on_loop_after_complete)
{
	char err[128];
	struct sbce_workers *w;
	struct test_job *jobs = make_jobs(100, 0);

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 2, err, sizeof(err));
	ex = sbce_workers_executor(w);
	done_total = 0;
	expected_total = 100;
	for (int i = 0; i < 100; i++)
		submit_like_dispatch(&jobs[i]);
	ck_assert_uint_eq(sbce_workers_in_flight(w), 100);
	ev_run(loop, 0);
	ck_assert_int_eq(done_total, 100);
	ck_assert_uint_eq(sbce_workers_in_flight(w), 0);
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(jobs[i].done_calls, 1);
		/* the started ones never ran work(); the others ran it on a worker */
		ck_assert(pthread_equal(jobs[i].worked_on, loop_thread) == (i % 2 == 1));
	}
	sbce_workers_destroy(w);
	ev_loop_destroy(loop);
	free(jobs);
}
END_TEST

/* Destroy without running the loop waits for the jobs still in the backend, and calls their done(). */
START_TEST(destroy_waits_for_async_jobs)
{
	char err[128];
	struct sbce_workers *w;
	struct test_job *jobs = make_jobs(20, 0);

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 2, err, sizeof(err));
	ex = sbce_workers_executor(w);
	done_total = 0;
	expected_total = -1;
	for (int i = 0; i < 20; i++) {
		jobs[i].seed = 2 * (unsigned)i + 1; /* every one starts asynchronously */
		submit_like_dispatch(&jobs[i]);
	}
	sbce_workers_destroy(w);
	ck_assert_int_eq(done_total, 20);
	ev_loop_destroy(loop);
	free(jobs);
}
END_TEST

static void *post_thread(void *arg)
{
	struct test_job *t = arg;

	usleep(100 + (useconds_t)(t->seed % 5) * 200);
	ex->post(ex, &t->job);
	return NULL;
}

/*
 * post() from other threads: done() on the loop thread, once each, no
 * work(), nothing counted in flight; destroy runs what is still posted.
 */
START_TEST(posted_jobs_done_on_loop)
{
	char err[128];
	struct sbce_workers *w;
	struct test_job *jobs = make_jobs(50, 0);
	pthread_t th[50];

	loop_thread = pthread_self();
	loop = ev_loop_new(EVFLAG_AUTO);
	w = sbce_workers_create(loop, 2, err, sizeof(err));
	ex = sbce_workers_executor(w);
	ck_assert_ptr_nonnull(ex->post);
	done_total = 0;
	expected_total = 50;
	for (int i = 0; i < 50; i++) {
		jobs[i].nowait_did_it = true; /* done() checks that no worker ran it: worked_on stays the loop's */
		jobs[i].worked_on = loop_thread;
		ck_assert_int_eq(pthread_create(&th[i], NULL, post_thread, &jobs[i]), 0);
	}
	ck_assert_uint_eq(sbce_workers_in_flight(w), 0);
	ev_run(loop, 0);
	for (int i = 0; i < 50; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(jobs[i].done_calls, 1);
	}
	ck_assert_uint_eq(sbce_workers_in_flight(w), 0);
	/* One posted that the loop never ran: destroy runs its done(). */
	expected_total = -1;
	ex->post(ex, &jobs[0].job);
	sbce_workers_destroy(w);
	ck_assert_int_eq(jobs[0].done_calls, 2);
	ev_loop_destroy(loop);
	free(jobs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workers");
	TCase *tc = tcase_create("workers");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, work_on_workers_done_on_loop);
	tcase_add_test(tc, resubmit_from_done);
	tcase_add_test(tc, destroy_finishes_queued_jobs);
	tcase_add_test(tc, nowait_jobs_done_on_loop_after_submit);
	tcase_add_test(tc, queued_job_not_held_behind_blocked_one);
	tcase_add_test(tc, async_jobs_done_on_loop_after_complete);
	tcase_add_test(tc, destroy_waits_for_async_jobs);
	tcase_add_test(tc, posted_jobs_done_on_loop);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

//! An idle-priority helper thread that runs one job at a time for a caller that waits on it.
//!
//! On Linux the thread is scheduled `SCHED_IDLE`: it runs on CPU time no other thread wants, so
//! a burst of work on it (the log writer's commit, about half a millisecond of CPU) never delays
//! a request that is ready to run — on a small machine such a burst on a shared core was the
//! whole of the relay's p99 tail. The price is that it can be starved while the CPU is busy;
//! [`IdleWorker::run`] says when a job took longer than the caller's patience, so the caller can
//! do its work itself while the machine is that busy. An unprivileged thread cannot leave
//! `SCHED_IDLE` again, hence a thread of its own rather than lowering the caller's.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a job went.
#[derive(Debug)]
pub enum Waited<T> {
    /// Done within the caller's patience.
    Prompt(T),
    /// Done, but later than the caller's patience: the CPU is contended.
    Slow(T),
}

/// The handle on the thread; dropping it ends the thread and waits for it (so whatever the
/// jobs hold, such as the database, is released when the owner is done).
#[derive(Debug)]
pub struct IdleWorker<T> {
    /// `None` only while dropping.
    jobs: Option<mpsc::SyncSender<T>>,
    done: mpsc::Receiver<T>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> IdleWorker<T> {
    /// Starts a thread named `name` that runs `work` on each job at idle priority; `None` where
    /// the thread cannot be given idle priority (another OS, a sandbox that forbids it) or
    /// cannot be started.
    pub fn spawn(name: &str, mut work: impl FnMut(T) -> T + Send + 'static) -> Option<Self> {
        let (jobs, queued) = mpsc::sync_channel::<T>(1);
        let (finished, done) = mpsc::sync_channel::<T>(1);
        let (ready, started) = mpsc::sync_channel::<bool>(1);
        let spawned = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let idle = lower_own_priority();
                if ready.send(idle).is_err() || !idle {
                    return;
                }
                for job in queued {
                    if finished.send(work(job)).is_err() {
                        return;
                    }
                }
            });
        let thread = match spawned {
            Ok(thread) => thread,
            Err(e) => {
                tracing::warn!(error = %e, "could not start an idle-priority thread");
                return None;
            }
        };
        started.recv().ok()?.then_some(IdleWorker {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        })
    }

    /// Runs `job` on the thread and waits for its result; `None` if the thread has died (the
    /// job panicked), in which case the job is lost.
    pub fn run(&self, job: T, patience: Duration) -> Option<Waited<T>> {
        self.jobs.as_ref()?.send(job).ok()?;
        match self.done.recv_timeout(patience) {
            Ok(out) => Some(Waited::Prompt(out)),
            Err(RecvTimeoutError::Timeout) => self.done.recv().ok().map(Waited::Slow),
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }
}

impl<T> Drop for IdleWorker<T> {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            // The thread only ends with a panic that `run` has already reported.
            let _ = thread.join();
        }
    }
}

/// Schedules the calling thread `SCHED_IDLE`; whether that worked.
#[cfg(target_os = "linux")]
fn lower_own_priority() -> bool {
    use thread_priority::ThreadPriority;
    use thread_priority::unix::{
        NormalThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
        thread_native_id,
    };
    let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
    match set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, idle) {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(error = ?e, "idle scheduling refused");
            false
        }
    }
}

/// Idle scheduling is only used on Linux.
#[cfg(not(target_os = "linux"))]
fn lower_own_priority() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_in_order_on_an_idle_thread_and_come_back() {
        let Some(worker) = IdleWorker::spawn("test-idle", |n: u32| n * 2) else {
            // Not Linux, or idle scheduling refused: the callers do the work themselves.
            return;
        };
        for n in 1..=3 {
            match worker.run(n, Duration::from_secs(30)) {
                Some(Waited::Prompt(out)) | Some(Waited::Slow(out)) => assert_eq!(out, n * 2),
                None => panic!("the worker died"),
            }
        }
    }

    #[test]
    fn a_job_past_the_patience_is_reported_slow_and_still_returned() {
        let Some(worker) = IdleWorker::spawn("test-idle", |d: Duration| {
            std::thread::sleep(d);
            d
        }) else {
            return;
        };
        let slow = worker.run(Duration::from_millis(50), Duration::from_millis(1));
        assert!(matches!(slow, Some(Waited::Slow(d)) if d == Duration::from_millis(50)));
    }

    #[test]
    fn a_panicking_job_is_reported_as_a_dead_worker() {
        let Some(worker) = IdleWorker::spawn("test-idle", |fail: bool| {
            assert!(!fail, "job failed");
            fail
        }) else {
            return;
        };
        assert!(worker.run(true, Duration::from_secs(30)).is_none());
        assert!(worker.run(false, Duration::from_secs(30)).is_none());
    }

    #[test]
    fn dropping_the_handle_waits_for_the_thread_and_what_it_holds() {
        let held = std::sync::Arc::new(());
        let Some(worker) = IdleWorker::spawn("test-idle", {
            let held = held.clone();
            move |n: u8| {
                let _still_held = &held;
                n
            }
        }) else {
            return;
        };
        assert!(worker.run(1, Duration::from_secs(30)).is_some());
        drop(worker);
        assert_eq!(std::sync::Arc::strong_count(&held), 1, "released on drop");
    }
}

//! The threads a concurrent scenario runs on. Under std they are kept and reused: a
//! perturbed search runs each scenario a hundred times, and starting two or three new
//! threads for every execution cost more than the execution itself (a start and join about
//! 60 µs here, handing a task to a waiting thread about half that). A reused thread takes
//! what [`thread::spawn`](crate::sync::thread::spawn) would have given a new one (its
//! perturbation seed and place in the scenario, the waits group) for each task, and gives
//! it back after. Under shuttle and loom every thread is the scheduler's, started anew.
#[cfg(not(any(loom, feature = "shuttle")))]
pub(crate) use reused::spawn;

#[cfg(any(loom, feature = "shuttle"))]
pub(crate) use crate::sync::thread::spawn;

#[cfg(not(any(loom, feature = "shuttle")))]
mod reused {
    use std::cell::RefCell;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::mpsc::{channel, Receiver, Sender};

    /// A task for a kept thread.
    type Task = Box<dyn FnOnce() + Send>;

    /// The most idle threads a thread keeps (the twenty contenders' scenario, and a few more).
    const KEPT: usize = 24;

    std::thread_local! {
        /// This thread's idle threads, each waiting for its next task.
        static IDLE: RefCell<Vec<Sender<Task>>> = const { RefCell::new(Vec::new()) };
    }

    /// A task started with [`spawn`]; [`join`](Handle::join) waits for its end.
    pub(crate) struct Handle<T> {
        answer: Receiver<std::thread::Result<T>>,
        worker: Sender<Task>,
    }

    impl<T> Handle<T> {
        /// Waits for the task to end: its value, or its panic's payload, as
        /// [`std::thread::JoinHandle::join`] gives them. The thread is then kept for the
        /// calling thread's next [`spawn`].
        pub(crate) fn join(self) -> std::thread::Result<T> {
            match self.answer.recv() {
                Ok(answer) => {
                    IDLE.with(|idle| {
                        let mut idle = idle.borrow_mut();
                        if idle.len() < KEPT {
                            idle.push(self.worker);
                        }
                    });
                    answer
                }
                Err(_) => Err(Box::new("the scenario's thread ended without an answer")),
            }
        }
    }

    /// Runs `f` on a kept thread of the caller's, or on a new one, with what
    /// [`thread::spawn`](crate::sync::thread::spawn) would carry to a new thread.
    ///
    /// # Panics
    ///
    /// When no thread can be started (the system's limit), as `std::thread::spawn` does.
    pub(crate) fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Handle<T> {
        let inherited = crate::sync::thread::inheritance();
        let (reply, answer) = channel();
        let mut task: Task = Box::new(move || {
            let _ = reply.send(catch_unwind(AssertUnwindSafe(|| inherited.run(f))));
        });
        while let Some(worker) = IDLE.with(|idle| idle.borrow_mut().pop()) {
            match worker.send(task) {
                Ok(()) => return Handle { answer, worker },
                // That thread has ended: the task comes back.
                Err(back) => task = back.0,
            }
        }
        let (worker, tasks) = channel::<Task>();
        let started = std::thread::Builder::new()
            .name("scenario".to_string())
            .spawn(move || {
                while let Ok(task) = tasks.recv() {
                    task();
                }
            });
        if let Err(e) = started {
            panic!("could not start a scenario's thread: {e}");
        }
        // The thread was just started and waits for this task.
        let _ = worker.send(task);
        Handle { answer, worker }
    }

    #[cfg(test)]
    mod tests {
        use super::spawn;

        #[test]
        fn a_joined_thread_is_reused_and_a_panic_is_returned() {
            let first = spawn(|| std::thread::current().id());
            let id = first.join().ok();
            let second = spawn(|| std::thread::current().id());
            assert_eq!(second.join().ok(), id, "the thread was kept");
            let both = (spawn(|| 1), spawn(|| 2));
            assert_eq!((both.0.join().ok(), both.1.join().ok()), (Some(1), Some(2)));
            let panicked = spawn(|| -> u8 { std::panic::resume_unwind(Box::new("boom")) });
            assert!(panicked.join().is_err());
            assert_eq!(
                spawn(|| 3).join().ok(),
                Some(3),
                "a thread survives a panic"
            );
        }
    }
}

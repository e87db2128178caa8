//! The soft NIC's one interrupt vector: raised when a completion reaches a
//! CQ ring, so a program can sleep until there is something to poll
//! (libmrc's completion channels) instead of spinning on its rings.
//!
//! The card has no interrupts (it is polled); this is what its MSI-X
//! vector would be. An interrupt is a level held until one waiter takes
//! it: a completion written while nobody waits is not lost, and several
//! written before the waiter runs wake it once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Raising costs one atomic store while nobody waits (the common case: a
/// program that polls): the condition variable is touched only for a
/// sleeping waiter.
#[derive(Default)]
pub struct Interrupt {
    pending: AtomicBool,
    waiters: AtomicUsize,
    lock: Mutex<()>,
    raised: Condvar,
}

impl Interrupt {
    /// A completion was written.
    pub fn raise(&self) {
        self.pending.store(true, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            // Under the lock: a waiter between its check and its sleep
            // holds it, so the notification cannot fall in between.
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.raised.notify_all();
        }
    }

    /// Wait up to `timeout` for the interrupt and take it; false on
    /// timeout.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let deadline = std::time::Instant::now() + timeout;
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let taken = loop {
            if self.pending.swap(false, Ordering::SeqCst) {
                break true;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break false;
            }
            g = self.raised.wait_timeout(g, left).unwrap_or_else(|e| e.into_inner()).0;
        };
        drop(g);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raise_before_the_wait_is_kept_and_taken_once() {
        let i = Interrupt::default();
        assert!(!i.wait(Duration::from_millis(1)));
        i.raise();
        i.raise();
        assert!(i.wait(Duration::from_millis(1)));
        assert!(!i.wait(Duration::from_millis(1)));
    }

    #[test]
    fn a_raise_wakes_a_waiter() {
        let i = std::sync::Arc::new(Interrupt::default());
        let w = std::sync::Arc::clone(&i);
        let t = std::thread::spawn(move || w.wait(Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(5));
        i.raise();
        assert!(t.join().unwrap());
    }
}

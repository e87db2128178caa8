//! The soft NIC's one interrupt vector: raised when a completion reaches a
//! CQ ring, so a program can sleep until there is something to poll
//! (libmrc's completion channels) instead of spinning on its rings.
//!
//! The card has no interrupts (it is polled); this is what its MSI-X
//! vector would be. An interrupt is a level held until one waiter takes
//! it: a completion written while nobody waits is not lost, and several
//! written before the waiter runs wake it once.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

#[derive(Default)]
pub struct Interrupt {
    pending: Mutex<bool>,
    raised: Condvar,
}

impl Interrupt {
    /// A completion was written.
    pub fn raise(&self) {
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.raised.notify_all();
    }

    /// Wait up to `timeout` for the interrupt and take it; false on
    /// timeout.
    pub fn wait(&self, timeout: Duration) -> bool {
        let p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let (mut p, _) = self
            .raised
            .wait_timeout_while(p, timeout, |pending| !*pending)
            .unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *p)
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

//! Partitioned runs: the fabric cut into parts, one per process (an MPI
//! rank) or thread, simulated in parallel under conservative
//! synchronisation (docs/sim-mpi.md).
//!
//! * [`Partition`]: which part simulates each node, and the lookahead
//!   the cut allows (the smallest delay of a link whose ends are in
//!   different parts).
//! * [`Exchange`]: what the parts need from each other once per window:
//!   the earliest pending event and the flows finished (a reduction), the
//!   events one part schedules for another (an all-to-all), and the
//!   partial results at the end (a gather). [`Solo`] is the one-part run,
//!   [`ThreadGroup`] parts as threads of one process, `MpiExchange` (feature
//!   `mpi`) parts as MPI ranks.
//!
//! Why the results do not depend on the cut: every event's tie key names
//! the node that scheduled it and that node's count (`event`), every
//! random draw belongs to a port or a flow, and every interaction between
//! nodes crosses a link (or waits the responder-free delay, which is at
//! least one link's). So each node sees the same events in the same
//! order whichever part it is in.

use std::sync::{Arc, Condvar, Mutex};

use super::topo::{NodeKind, Topology};

/// Which part simulates each node.
#[derive(Clone, Debug)]
pub struct Partition {
    /// This part.
    pub rank: u32,
    /// How many parts.
    pub ranks: u32,
    /// Per node, the part that simulates it.
    owner: Vec<u32>,
    /// Smallest delay (link propagation plus the far node's forwarding
    /// latency) of a link whose ends are in different parts, ps;
    /// `u64::MAX` when no link crosses.
    pub lookahead_ps: u64,
}

impl Partition {
    /// Everything in one part.
    pub fn single(topo: &Topology) -> Partition {
        Partition {
            rank: 0,
            ranks: 1,
            owner: vec![0; topo.nodes.len()],
            lookahead_ps: u64::MAX,
        }
    }

    /// Cut `topo` into `ranks` parts, this one `rank`, along pods: hosts in
    /// contiguous blocks of their numbers (a permutation's or all-to-all's
    /// load spreads evenly), each switch with the part most of its
    /// lower-tier neighbours are in (a leaf with its hosts, an aggregation
    /// switch with its pod's leaves, in every plane), and switches with no
    /// majority (spines and cores, which every pod reaches equally) dealt
    /// round robin. Only links between pods and the core then cross parts.
    pub fn by_pods(topo: &Topology, ranks: u32, rank: u32) -> Partition {
        let ranks = ranks.max(1);
        let n_hosts = topo.n_hosts as u64;
        let mut owner = vec![u32::MAX; topo.nodes.len()];
        for h in 0..topo.n_hosts {
            owner[h as usize] = (h as u64 * ranks as u64 / n_hosts.max(1)) as u32;
        }
        let tier_of = |n: usize| match topo.nodes[n].kind {
            NodeKind::Switch { tier, .. } => Some(tier),
            NodeKind::Host => None,
        };
        let max_tier = (0..topo.nodes.len()).filter_map(tier_of).max().unwrap_or(0);
        let mut dealt = 0u32;
        for tier in 0..=max_tier {
            for n in 0..topo.nodes.len() {
                if tier_of(n) != Some(tier) {
                    continue;
                }
                let mut votes = vec![0u32; ranks as usize];
                for p in &topo.nodes[n].ports {
                    let peer = p.peer as usize;
                    let below = tier_of(peer).is_none_or(|t| t < tier);
                    if below && owner[peer] != u32::MAX {
                        votes[owner[peer] as usize] += 1;
                    }
                }
                let best = votes.iter().copied().max().unwrap_or(0);
                let leaders: Vec<u32> = (0..ranks).filter(|&r| votes[r as usize] == best).collect();
                owner[n] = if best > 0 && leaders.len() == 1 {
                    leaders[0]
                } else {
                    dealt += 1;
                    (dealt - 1) % ranks
                };
            }
        }
        let mut lookahead_ps = u64::MAX;
        for (n, node) in topo.nodes.iter().enumerate() {
            for p in &node.ports {
                if owner[n] != owner[p.peer as usize] {
                    let far = &topo.nodes[p.peer as usize];
                    lookahead_ps = lookahead_ps.min(p.latency.as_ps() + far.latency.as_ps());
                }
            }
        }
        Partition {
            rank,
            ranks,
            owner,
            lookahead_ps,
        }
    }

    /// The part that simulates `node`.
    #[inline]
    pub fn owner(&self, node: u32) -> u32 {
        self.owner[node as usize]
    }

    /// This part simulates `node`.
    #[inline]
    pub fn owns(&self, node: u32) -> bool {
        self.owner[node as usize] == self.rank
    }

    /// Nodes per part (for the run's report).
    pub fn sizes(&self) -> Vec<u32> {
        let mut s = vec![0; self.ranks as usize];
        for &o in &self.owner {
            s[o as usize] += 1;
        }
        s
    }
}

/// What the parts of a run exchange. Every part calls each method the same
/// number of times, in the same order (they are collective operations).
pub trait Exchange {
    /// This part, `0..ranks()`.
    fn rank(&self) -> u32;
    fn ranks(&self) -> u32;
    /// Over every part: the smallest `next` (the earliest pending event,
    /// ps) and the sum of `done` (flows finished).
    fn reduce(&mut self, next: u64, done: u64) -> (u64, u64);
    /// Send `out[r]` to part `r` (this part's own entry is empty) and
    /// receive what each other part sent here, in part order. The buffers
    /// of `out` are emptied and kept for reuse.
    fn exchange(&mut self, out: &mut [Vec<u8>]) -> Vec<Vec<u8>>;
    /// Part 0 receives every part's `bytes` (its own included), in part
    /// order; the others receive `None`.
    fn gather(&mut self, bytes: Vec<u8>) -> Option<Vec<Vec<u8>>>;
}

/// The one-part run: nothing to exchange.
#[derive(Debug, Default)]
pub struct Solo;

impl Exchange for Solo {
    fn rank(&self) -> u32 {
        0
    }
    fn ranks(&self) -> u32 {
        1
    }
    fn reduce(&mut self, next: u64, done: u64) -> (u64, u64) {
        (next, done)
    }
    fn exchange(&mut self, out: &mut [Vec<u8>]) -> Vec<Vec<u8>> {
        out.iter_mut().for_each(Vec::clear);
        Vec::new()
    }
    fn gather(&mut self, bytes: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        Some(vec![bytes])
    }
}

/// A barrier that a member can break: the others then stop waiting (and
/// unwind with [`PartFailed`]) instead of waiting forever for a part whose
/// thread panicked.
#[derive(Debug)]
struct Gate {
    n: usize,
    /// Arrived in this generation, the generation, broken.
    state: Mutex<(usize, u64, bool)>,
    cv: Condvar,
}

/// What the other parts of a [`ThreadGroup`] unwind with when one part's
/// thread panicked (the first panic is the one to report).
#[derive(Debug)]
pub struct PartFailed;

impl Gate {
    fn new(n: usize) -> Gate {
        Gate {
            n,
            state: Mutex::new((0, 0, false)),
            cv: Condvar::new(),
        }
    }

    fn wait(&self) {
        let mut g = lock(&self.state);
        let generation = g.1;
        if !g.2 {
            g.0 += 1;
            if g.0 == self.n {
                g.0 = 0;
                g.1 += 1;
                self.cv.notify_all();
                return;
            }
            while g.1 == generation && !g.2 {
                g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
            }
            if g.1 != generation {
                return;
            }
        }
        drop(g);
        std::panic::resume_unwind(Box::new(PartFailed));
    }

    fn break_all(&self) {
        lock(&self.state).2 = true;
        self.cv.notify_all();
    }
}

/// State the threads of a [`ThreadGroup`] share.
#[derive(Debug)]
struct Shared {
    barrier: Gate,
    /// `mail[to][from]`.
    mail: Vec<Vec<Mutex<Vec<u8>>>>,
    /// Per part: its `next` and `done` of the current reduction.
    votes: Mutex<Vec<(u64, u64)>>,
    gathered: Mutex<Vec<Vec<u8>>>,
}

/// Parts as threads of one process, exchanging through shared memory with
/// a barrier per step: the same protocol as MPI ranks, to test a
/// partitioned run without MPI and to use the cores of one machine.
#[derive(Debug, Clone)]
pub struct ThreadGroup {
    rank: u32,
    ranks: u32,
    shared: Arc<Shared>,
}

impl ThreadGroup {
    /// One member per part; give each to its own thread.
    pub fn new(ranks: u32) -> Vec<ThreadGroup> {
        let n = ranks.max(1) as usize;
        let shared = Arc::new(Shared {
            barrier: Gate::new(n),
            mail: (0..n)
                .map(|_| (0..n).map(|_| Mutex::new(Vec::new())).collect())
                .collect(),
            votes: Mutex::new(vec![(u64::MAX, 0); n]),
            gathered: Mutex::new(vec![Vec::new(); n]),
        });
        (0..n as u32)
            .map(|rank| ThreadGroup {
                rank,
                ranks: n as u32,
                shared: shared.clone(),
            })
            .collect()
    }
}

impl ThreadGroup {
    /// This member's part failed (its thread panicked): every other member
    /// waiting on the group, or coming to, unwinds with [`PartFailed`].
    pub fn abandon(&self) {
        self.shared.barrier.break_all();
    }
}

impl Drop for ThreadGroup {
    /// A member dropped by a panic unwinding its thread abandons the group.
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.abandon();
        }
    }
}

/// A poisoned lock means another part's thread panicked: the run is lost
/// either way, so carry on with the data (the panic is reported by the
/// thread's join).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Exchange for ThreadGroup {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn ranks(&self) -> u32 {
        self.ranks
    }
    fn reduce(&mut self, next: u64, done: u64) -> (u64, u64) {
        let s = &self.shared;
        lock(&s.votes)[self.rank as usize] = (next, done);
        s.barrier.wait();
        let r = lock(&s.votes)
            .iter()
            .fold((u64::MAX, 0), |(m, d), &(n, k)| (m.min(n), d + k));
        // Nobody writes the next votes before everyone has read these.
        s.barrier.wait();
        r
    }
    fn exchange(&mut self, out: &mut [Vec<u8>]) -> Vec<Vec<u8>> {
        let s = &self.shared;
        for (to, buf) in out.iter_mut().enumerate() {
            if to as u32 != self.rank {
                std::mem::swap(&mut *lock(&s.mail[to][self.rank as usize]), buf);
            }
            buf.clear();
        }
        s.barrier.wait();
        let got = (0..self.ranks as usize)
            .filter(|&from| from as u32 != self.rank)
            .map(|from| std::mem::take(&mut *lock(&s.mail[self.rank as usize][from])))
            .collect();
        s.barrier.wait();
        got
    }
    fn gather(&mut self, bytes: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        let s = &self.shared;
        lock(&s.gathered)[self.rank as usize] = bytes;
        s.barrier.wait();
        let r = (self.rank == 0).then(|| std::mem::take(&mut *lock(&s.gathered)));
        s.barrier.wait();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::topo::TopoParams;

    #[test]
    fn pods_stay_together_and_only_core_links_cross() {
        let topo = Topology::build(&TopoParams {
            tiers: 3,
            hosts: 128,
            ..TopoParams::default()
        })
        .expect("topology");
        let p = Partition::by_pods(&topo, 4, 0);
        // Each host's leaf is in the host's part.
        for h in 0..topo.n_hosts {
            let leaf = topo.nodes[h as usize].ports[0].peer;
            assert_eq!(p.owner(leaf), p.owner(h), "host {h}");
        }
        let mut crossing = 0;
        for (n, node) in topo.nodes.iter().enumerate() {
            for port in &node.ports {
                if p.owner(n as u32) != p.owner(port.peer) {
                    crossing += 1;
                    let tiers = [&topo.nodes[n].kind, &topo.nodes[port.peer as usize].kind];
                    assert!(
                        tiers.iter().any(|k| matches!(k, NodeKind::Switch { tier: 2, .. })),
                        "a crossing link that does not reach the core: {n} -> {}",
                        port.peer
                    );
                }
            }
        }
        assert!(crossing > 0);
        assert!(p.lookahead_ps > 0 && p.lookahead_ps < u64::MAX);
        let sizes = p.sizes();
        let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(hi - lo <= hi / 8, "unbalanced parts {sizes:?}");
    }

    #[test]
    fn threads_reduce_exchange_and_gather() {
        let members = ThreadGroup::new(3);
        let handles: Vec<_> = members
            .into_iter()
            .map(|mut m| {
                std::thread::spawn(move || {
                    let r = m.rank();
                    let (next, done) = m.reduce(100 + r as u64, r as u64 + 1);
                    let mut out: Vec<Vec<u8>> = (0..3)
                        .map(|to| if to == r { vec![] } else { vec![r as u8, to as u8] })
                        .collect();
                    let got = m.exchange(&mut out);
                    let g = m.gather(vec![r as u8]);
                    (r, next, done, got, g)
                })
            })
            .collect();
        for h in handles {
            let (r, next, done, got, g) = h.join().expect("thread");
            assert_eq!((next, done), (100, 6));
            let want: Vec<Vec<u8>> = (0..3u8).filter(|&f| f as u32 != r).map(|f| vec![f, r as u8]).collect();
            assert_eq!(got, want);
            assert_eq!(g, (r == 0).then(|| vec![vec![0], vec![1], vec![2]]));
        }
    }
}

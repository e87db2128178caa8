//! Parts of a run as MPI ranks (feature `mpi`): [`Exchange`] over MPI's
//! collectives, one rank per part (docs/sim-mpi.md).
//!
//! Per window: one `MPI_Allreduce` for the earliest pending event (min)
//! and one for the flows finished (sum), one `MPI_Alltoall` of byte counts
//! and one `MPI_Alltoallv` of the events themselves. At the end, the
//! partial outputs are gathered on rank 0 (`MPI_Gatherv`, in pieces of
//! at most [`GATHER_PIECE`] bytes per rank, as MPI counts are 32-bit).

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition as MpiPartition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

use super::partition::Exchange;

/// Most bytes one rank sends in one gather (under `i32::MAX`).
pub const GATHER_PIECE: usize = 1 << 30;

/// This process's rank of the world communicator.
pub struct MpiExchange {
    world: SimpleCommunicator,
    rank: u32,
    ranks: u32,
    /// Finalizes MPI when dropped; declared last so it outlives `world`.
    _universe: Universe,
}

impl MpiExchange {
    /// Initialise MPI (once per process); `None` if it was already.
    pub fn init() -> Option<MpiExchange> {
        let universe = mpi::initialize()?;
        let world = universe.world();
        Some(MpiExchange {
            rank: world.rank() as u32,
            ranks: world.size() as u32,
            world,
            _universe: universe,
        })
    }

    /// The processor (host) name MPI reports for this rank.
    pub fn processor_name(&self) -> String {
        mpi::environment::processor_name().unwrap_or_else(|_| "?".into())
    }
}

/// A buffer of `len` bytes whose address is a real allocation even when
/// `len` is 0: an empty `Vec<u8>` points at address 1, which OpenMPI reads
/// as `MPI_IN_PLACE`.
fn buffer(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len.max(1));
    v.resize(len, 0);
    v
}

/// Start offsets of consecutive blocks of `counts`.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

impl Exchange for MpiExchange {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn ranks(&self) -> u32 {
        self.ranks
    }

    fn reduce(&mut self, next: u64, done: u64) -> (u64, u64) {
        let (mut first, mut all) = (0u64, 0u64);
        self.world.all_reduce_into(&next, &mut first, SystemOperation::min());
        self.world.all_reduce_into(&done, &mut all, SystemOperation::sum());
        (first, all)
    }

    fn exchange(&mut self, out: &mut [Vec<u8>]) -> Vec<Vec<u8>> {
        let n = self.ranks as usize;
        let send_counts: Vec<Count> = out
            .iter()
            .map(|b| Count::try_from(b.len()).expect("a window's events for one rank exceed 2 GiB"))
            .collect();
        let mut recv_counts = vec![0 as Count; n];
        self.world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let mut send = buffer(0);
        for b in out.iter_mut() {
            send.extend_from_slice(b);
            b.clear();
        }
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        let mut recv = buffer(total);
        let (sd, rd) = (displacements(&send_counts), displacements(&recv_counts));
        {
            let s = MpiPartition::new(&send[..], &send_counts[..], &sd[..]);
            let mut r = PartitionMut::new(&mut recv[..], &recv_counts[..], &rd[..]);
            self.world.all_to_all_varcount_into(&s, &mut r);
        }
        (0..n)
            .filter(|&from| from as u32 != self.rank)
            .map(|from| {
                let at = rd[from] as usize;
                recv[at..at + recv_counts[from] as usize].to_vec()
            })
            .collect()
    }

    fn gather(&mut self, bytes: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        let n = self.ranks as usize;
        let root = self.world.process_at_rank(0);
        let mut lens = vec![0u64; n];
        let len = bytes.len() as u64;
        if self.rank == 0 {
            root.gather_into_root(&len, &mut lens[..]);
        } else {
            root.gather_into(&len);
        }
        // Every rank knows how many pieces: the longest output's.
        let mut longest = 0u64;
        self.world.all_reduce_into(&len, &mut longest, SystemOperation::max());
        let pieces = (longest as usize).div_ceil(GATHER_PIECE).max(1);
        let mut got: Vec<Vec<u8>> = lens.iter().map(|&l| Vec::with_capacity(l as usize)).collect();
        let mut bytes = bytes;
        bytes.reserve(1);
        for k in 0..pieces {
            let lo = (k * GATHER_PIECE).min(bytes.len());
            let hi = ((k + 1) * GATHER_PIECE).min(bytes.len());
            let piece = &bytes[lo..hi];
            if self.rank == 0 {
                let counts: Vec<Count> = lens
                    .iter()
                    .map(|&l| {
                        let l = l as usize;
                        ((k + 1) * GATHER_PIECE).min(l).saturating_sub(k * GATHER_PIECE) as Count
                    })
                    .collect();
                let displs = displacements(&counts);
                let mut buf = buffer(counts.iter().map(|&c| c as usize).sum());
                {
                    let mut r = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
                    root.gather_varcount_into_root(piece, &mut r);
                }
                for (r, g) in got.iter_mut().enumerate() {
                    let at = displs[r] as usize;
                    g.extend_from_slice(&buf[at..at + counts[r] as usize]);
                }
            } else {
                root.gather_varcount_into(piece);
            }
        }
        (self.rank == 0).then_some(got)
    }
}

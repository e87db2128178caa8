//! The send CQ block (`mrc_send_cq`) as emitted Verilog, verilated: its
//! per-QP list must refuse a 17th record once its 5-bit pointers have
//! wrapped. rust-hdl's own simulation wraps `tail - head` at 5 bits, but
//! the emitted Verilog compared `(tail - head) == 32'h10` at 32 bits, so
//! only a test of the Verilog sees the overrun (found by the two-NIC
//! system test, docs/cosim.md "Findings").

use contract::layout::cqe;
use hw::flow::emit_block;
use hw::send_cq::{SendCompletions, LIST_DEPTH};
use verilated::{build, default_cache_dir, BuildOptions, Model};

const QP: u64 = 5;
const RING: u8 = 3;

use verilated::skip_without_verilator;

struct Bench {
    m: Model,
    /// wr_ids of the CQEs taken so far (`cqe_ready` is always high).
    cqes: Vec<u64>,
}

impl Bench {
    /// One clock edge; records a CQE taken at it.
    fn step(&mut self) {
        self.m.step();
        if self.m.get_bit(self.m.port("cqe_valid").unwrap()) {
            let entry = self.m.get_bytes(self.m.port("cqe_entry").unwrap());
            assert_eq!(self.m.get(self.m.port("cqe_ring").unwrap()), u64::from(RING));
            assert_eq!(entry[cqe::STATUS.bit() / 8], 0, "success CQE");
            let w = cqe::WR_ID.bit() / 8;
            self.cqes.push(u64::from_le_bytes(entry[w..w + 8].try_into().unwrap()));
        }
    }

    fn set(&mut self, name: &str, v: u64) {
        self.m.set_by_name(name, v).unwrap();
    }

    /// Offer message record `wr_id` (one packet, PSN = wr_id) for at most
    /// `patience` cycles; true if it was taken.
    fn push(&mut self, wr_id: u64, patience: u32) -> bool {
        self.set("msg_valid", 1);
        self.set("msg_qp", QP);
        self.set("msg_wr_id", wr_id);
        self.set("msg_opcode", 1);
        self.set("msg_len", 1);
        self.set("msg_sq_index", wr_id);
        self.set("msg_signaled", 1);
        self.set("msg_first_psn", wr_id);
        self.set("msg_last_psn", wr_id);
        for _ in 0..patience {
            self.step();
            if self.m.get_bit(self.m.port("msg_ready").unwrap()) {
                self.set("msg_valid", 0);
                return true;
            }
        }
        self.set("msg_valid", 0);
        false
    }

    /// Cumulative acknowledgement: every PSN before `una` is acknowledged;
    /// then run until the walk is over.
    fn ack(&mut self, una: u64) {
        self.set("ack_valid", 1);
        self.set("ack_qp", QP);
        self.set("ack_una", una);
        loop {
            self.step();
            if self.m.get_bit(self.m.port("ack_ready").unwrap()) {
                break;
            }
        }
        self.set("ack_valid", 0);
        for _ in 0..(8 + 3 * LIST_DEPTH) {
            self.step();
        }
    }
}

#[test]
fn full_list_refuses_a_push_after_its_pointers_wrap() {
    if skip_without_verilator("the send-CQ block's Verilog") {
        return;
    }
    let rtl = emit_block("mrc_send_cq", &mut SendCompletions::default());
    let built = build(
        &rtl.verilog,
        "mrc_send_cq",
        &BuildOptions::default(),
        &default_cache_dir(),
    )
    .unwrap();
    let mut b = Bench {
        m: Model::load(&built).unwrap(),
        cqes: Vec::new(),
    };
    b.set("cqe_ready", 1);
    // Send context of the QP: cq_index = RING, start_psn = 0.
    let mut row = [0u8; 32];
    row[8] = RING;
    b.set("cfg$valid", 1);
    b.set("cfg$table", 1);
    b.set("cfg$index", QP);
    b.m.set_bytes(b.m.port("cfg$data").unwrap(), &row);
    b.step();
    b.set("cfg$valid", 0);
    b.step();

    let depth = LIST_DEPTH as u64;
    let mut next = 0u64;
    // Two rounds: fill the list, see the next push refused, acknowledge
    // everything in it. The second round's pointers run from 16 to 32,
    // i.e. the tail wraps to 0 while the head is 16.
    for round in 0..2 {
        for _ in 0..depth {
            assert!(
                b.push(next, 200),
                "round {round}: wr_id {next} taken while the list has room"
            );
            next += 1;
        }
        assert!(
            !b.push(next, 60),
            "round {round}: wr_id {next} must wait: the list holds {depth} already"
        );
        b.ack(next);
        assert_eq!(b.cqes, (0..next).collect::<Vec<_>>(), "round {round}: CQEs in order");
    }
    // The waiting record goes in once there is room, and completes.
    assert!(b.push(next, 200));
    b.ack(next + 1);
    assert_eq!(b.cqes, (0..=next).collect::<Vec<_>>());
}

//! The RTO scanner: the QP whose deadlines the engine checks when it has
//! no record to process, sweeping QPs `0..=last_qp`.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RtoScanner {
    pub clock: Signal<In, Clock>,
    /// The engine visits `qp` this cycle: move to the next.
    pub advance: Signal<In, Bit>,
    /// A new range (`last_qp`): restart the sweep at QP 0.
    pub restart: Signal<In, Bit>,
    pub last_qp: Signal<In, Bits<8>>,
    pub qp: Signal<Out, Bits<8>>,
    qp_r: DFF<Bits<8>>,
    /// The last QP, stored inverted so that the reset value (0) means 255:
    /// every QP is scanned until configured.
    last_qp_n: DFF<Bits<8>>,
}

impl Logic for RtoScanner {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, qp_r, last_qp_n);
        if self.advance.val() {
            if self.qp_r.q.val() == !self.last_qp_n.q.val() {
                self.qp_r.d.next = 0.into();
            } else {
                self.qp_r.d.next = self.qp_r.q.val() + 1;
            }
        }
        if self.restart.val() {
            self.last_qp_n.d.next = !self.last_qp.val();
            self.qp_r.d.next = 0.into();
        }
        self.qp.next = self.qp_r.q.val();
    }
}

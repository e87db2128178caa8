//! RTL of the MRC NIC pipeline (rust-hdl). Not started: see the hw issue.

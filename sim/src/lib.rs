//! Fabric simulator and Verilator co-simulation. Not started: see the sim issue.

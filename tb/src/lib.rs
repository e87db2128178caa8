//! Testbenches differential against the golden model. Not started.

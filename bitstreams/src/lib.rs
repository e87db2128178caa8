//! Alveo synthesis flow helpers. Not started.

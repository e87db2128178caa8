//! VFIO userspace driver with a co-simulation backend. Not started.

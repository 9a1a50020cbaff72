// Package uring reads many byte ranges of a file with one system call,
// through Linux's io_uring (raw system calls, no liburing): where a system
// call costs about 2 µs, a build that reads a spilled record for every row
// it writes (147,000 of them for 20,000 trajectories) saves most of that
// time. It owns the kernel's ring interface and nothing else; reads that
// fail or come back short are the caller's to redo with pread, so a ring
// changes how bytes are read, never what. BenchmarkRead compares it with
// pread on the same ranges.
package uring

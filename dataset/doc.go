// Package dataset splits budget probes into trajectory-disjoint SFT, RL and
// evaluation sets, balances their classes, and writes and reads them as
// verl-ready parquet.
//
// The split is by trajectory, never by probe: the reference pipeline
// duplicates possible probes and then re-splits probes 90/10, which puts
// copies of one probe (and prefixes of one trajectory) on both sides. Here
// every trajectory lands in exactly one split before any duplication.
package dataset

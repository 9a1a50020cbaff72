//go:build linux

package uring

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Ring is an io_uring submission and completion queue pair that reads
// many byte ranges of files with one system call. A Ring is not safe for
// concurrent use.
type Ring struct {
	fd      int
	mem     []byte // the SQ and CQ rings (IORING_FEAT_SINGLE_MMAP)
	sqeMem  []byte
	entries uint32
	sqTail  *uint32
	sqMask  uint32
	sqArray []uint32
	sqes    []uringSQE
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    []uringCQE
}

// The kernel's interface (linux/io_uring.h), the same on every
// architecture.
const (
	sysIOUringSetup   = 425
	sysIOUringEnter   = 426
	ioringOpRead      = 22
	ioringEnterGetEvt = 1
	ioringFeatSingle  = 1
	ioringOffSQEs     = 0x10000000
)

// uringParams is struct io_uring_params.
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// uringSQE is struct io_uring_sqe, with the fields a read uses.
type uringSQE struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	rwFlags  uint32
	userData uint64
	_        [3]uint64
}

// uringCQE is struct io_uring_cqe.
type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// New sets up a ring of entries submissions, or says why it cannot (no
// io_uring in this kernel, or it is disabled).
func New(entries uint32) (*Ring, error) {
	var p uringParams
	fd, _, errno := syscall.Syscall(sysIOUringSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &Ring{fd: int(fd), entries: p.sqEntries}
	if p.features&ioringFeatSingle == 0 {
		r.Close()
		return nil, fmt.Errorf("io_uring: no single mmap")
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	var err error
	if r.mem, err = syscall.Mmap(r.fd, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE); err != nil {
		r.Close()
		return nil, fmt.Errorf("io_uring rings: %w", err)
	}
	if r.sqeMem, err = syscall.Mmap(r.fd, ioringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(uringSQE{})), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE); err != nil {
		r.Close()
		return nil, fmt.Errorf("io_uring entries: %w", err)
	}
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }
	r.sqTail, r.sqMask = u32(p.sqOff.tail), *u32(p.sqOff.ringMask)
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Pointer(&r.mem[p.sqOff.array])), p.sqEntries)
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = u32(p.cqOff.head), u32(p.cqOff.tail), *u32(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*uringCQE)(unsafe.Pointer(&r.mem[p.cqOff.cqes])), p.cqEntries)
	return r, nil
}

// Read fills bufs[i] from fd at offs[i], at most r's entries at a time.
// It returns the indices it did not fill (a read that failed or came back
// short), for the caller to read with pread, and ok false when the ring
// is no longer usable (the caller closes it). Every read it submitted has
// completed when it returns, unless waiting for them failed, which is the
// error: the kernel may then still write into bufs, and r must stay open.
func (r *Ring) Read(fd int, offs []int64, bufs [][]byte) (failed []int, ok bool, err error) {
	defer runtime.KeepAlive(bufs)
	for start := 0; start < len(bufs); start += int(r.entries) {
		end := min(start+int(r.entries), len(bufs))
		tail := atomic.LoadUint32(r.sqTail)
		n := 0
		for i := start; i < end; i++ {
			if len(bufs[i]) == 0 {
				continue
			}
			idx := (tail + uint32(n)) & r.sqMask
			r.sqes[idx] = uringSQE{opcode: ioringOpRead, fd: int32(fd), off: uint64(offs[i]),
				addr: uint64(uintptr(unsafe.Pointer(&bufs[i][0]))), len: uint32(len(bufs[i])), userData: uint64(i)}
			r.sqArray[idx] = idx
			n++
		}
		if n == 0 {
			continue
		}
		atomic.StoreUint32(r.sqTail, tail+uint32(n))
		submitted, errno := r.enter(n, n)
		// The kernel reads into bufs until it posts their completions: wait
		// for every read it took.
		for done := 0; done < submitted; {
			head, ctail := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
			if head == ctail {
				if _, e := r.enter(0, 1); e != 0 {
					return nil, false, fmt.Errorf("io_uring: waiting for reads: %w", e)
				}
				continue
			}
			for ; head != ctail; head++ {
				c := r.cqes[head&r.cqMask]
				if i := int(c.userData); c.res < 0 || int(c.res) != len(bufs[i]) {
					failed = append(failed, i)
				}
				done++
			}
			atomic.StoreUint32(r.cqHead, head)
		}
		if errno != 0 || submitted != n {
			// Entries the kernel did not take are still in the ring, which
			// is closed; everything from this batch on goes to pread.
			for i := start; i < len(bufs); i++ {
				failed = append(failed, i)
			}
			return failed, false, nil
		}
	}
	return failed, true, nil
}

// enter submits n entries and waits until wait completions are ready,
// returning how many it submitted. A signal that interrupts it before it
// submits anything makes it try again; one that interrupts the wait
// returns early (the caller waits again).
func (r *Ring) enter(n, wait int) (int, syscall.Errno) {
	for {
		got, _, errno := syscall.Syscall6(sysIOUringEnter, uintptr(r.fd), uintptr(n), uintptr(wait), ioringEnterGetEvt, 0, 0)
		switch {
		case errno == syscall.EINTR && n == 0:
			return 0, 0
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return 0, errno
		}
		return int(got), 0
	}
}

// Close unmaps the rings and closes their descriptor.
func (r *Ring) Close() {
	if r.sqeMem != nil {
		syscall.Munmap(r.sqeMem)
	}
	if r.mem != nil {
		syscall.Munmap(r.mem)
	}
	syscall.Close(r.fd)
}

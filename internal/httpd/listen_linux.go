package httpd

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// acceptQueue returns the number of connections waiting in ln's accept
// queue, or -1 if it cannot tell. (For a listening socket Linux reports
// the queue's length as tcpi_unacked.)
func acceptQueue(ln net.Listener) int {
	n := -1
	control(ln, func(fd int) {
		if info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			n = int(info.Unacked)
		}
	})
	return n
}

func control(ln net.Listener, f func(fd int)) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { f(int(fd)) })
}

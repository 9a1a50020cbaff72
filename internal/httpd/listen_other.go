//go:build !linux

package httpd

import "net"

// acceptQueue cannot tell outside Linux.
func acceptQueue(ln net.Listener) int { return -1 }

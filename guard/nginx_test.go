package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bagen-data/internal/testenv"
)

// nginxConfig is the load balancer of the replicas test: nginx on
// loopback port listen hashing X-Bagen-Session onto the guards
// (consistent hashing: a replica that goes away moves only its own
// sessions), everything under prefix, X-Replica telling the agent which
// guard answered.
func nginxConfig(prefix string, listen int, guards []string) string {
	var servers strings.Builder
	for _, g := range guards {
		fmt.Fprintf(&servers, "    server %s;\n", g)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n" // the workers write temporary files under prefix
	}
	return user + `worker_processes 1;
pid ` + prefix + `/nginx.pid;
error_log ` + prefix + `/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ` + prefix + `/body;
  proxy_temp_path ` + prefix + `/proxy;
  fastcgi_temp_path ` + prefix + `/fastcgi;
  uwsgi_temp_path ` + prefix + `/uwsgi;
  scgi_temp_path ` + prefix + `/scgi;
  upstream guards {
    hash $http_x_bagen_session consistent;
` + servers.String() + `  }
  server {
    listen 127.0.0.1:` + fmt.Sprint(listen) + `;
    client_max_body_size 32m;
    location / {
      proxy_pass http://guards;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 300s;
      add_header X-Replica $upstream_addr always;
    }
  }
}
`
}

// startNginx runs nginx in the foreground with conf, its files in a
// temporary directory, until the test ends; it returns its URL.
func startNginx(t *testing.T, guards []string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin, err = exec.LookPath("/usr/sbin/nginx")
	}
	testenv.Need(t, "nginx (make nginx installs Debian's nginx-light)", err)
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(dir, port, guards)), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-e", filepath.Join(dir, "error.log"), "-p", dir, "-c", conf, "-g", "daemon off;")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT) // graceful shutdown
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s%s", err, stderr.Bytes(), log)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx is not listening on %s after 10 s:\n%s", addr, stderr.Bytes())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replica is one guard serving on loopback until kill.
type replica struct {
	g    *Guard
	addr string
	stop context.CancelFunc
	done chan error
}

func startReplica(t testing.TB, cfg Config) *replica {
	t.Helper()
	cfg.DrainTimeout = 10 * time.Second
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{g: g, addr: l.Addr().String(), stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- g.Serve(ctx, l) }()
	t.Cleanup(func() { r.kill(t) })
	return r
}

// kill shuts the replica down as SIGTERM does: its listener closes, the
// requests in flight finish, its running estimates are recorded.
func (r *replica) kill(t testing.TB) {
	if r.stop == nil {
		return
	}
	r.stop()
	r.stop = nil
	if err := <-r.done; err != nil && !errors.Is(err, net.ErrClosed) {
		t.Errorf("replica %s: %v", r.addr, err)
	}
}

// TestReplicasBehindNginx: three guards sharing one ledger behind a real
// nginx hashing the session header; after every session's fourth turn
// the replica that served the most early-stopped sessions is shut
// down and the agents keep sending. The sessions it served move to the
// others, which continue them from the ledger: every decision, every
// session's ledger and the stops counted are the single guard's.
func TestReplicasBehindNginx(t *testing.T) {
	upstream := teamUpstream(t)
	ledger := filepath.Join(t.TempDir(), "ledger")
	var reps []*replica
	var addrs []string
	for range 3 {
		r := startReplica(t, teamConfig(upstream, ledger))
		reps, addrs = append(reps, r), append(addrs, r.addr)
	}
	lb := startNginx(t, addrs)
	const killAfter = 4
	killed := ""
	run := driveTeam(t, func(int, int) string { return lb }, func(k int, run *teamRun) {
		if k != killAfter {
			return
		}
		killed = busiestReplica(run, killAfter)
		for _, r := range reps {
			if r.addr == killed {
				r.kill(t)
			}
		}
	})
	checkMoves(t, run, killed, killAfter)
	var stops float64
	for _, r := range reps {
		r.kill(t)
		stops += teamStops(r.g)
	}
	ref, refLedger, refStops := singleTeamRun(t, upstream)
	checkTeamReference(t, ref, refLedger)
	if run.decisions != ref.decisions {
		t.Errorf("decisions:\n got %v\nwant %v", run.decisions, ref.decisions)
	}
	compareLedgers(t, refLedger, ledger)
	if stops != refStops {
		t.Errorf("bagen_guard_stops_total summed over the replicas: %v, want the single guard's %v", stops, refStops)
	}
}

// servedBy is the guard that answered session i's turn k: the last
// address nginx tried.
func (r *teamRun) servedBy(i, k int) string {
	addrs := strings.Split(r.replicas[i][k-1], ", ")
	return addrs[len(addrs)-1]
}

// busiestReplica is the replica that answered turn k of the most
// sessions whose stop was decided by then (their later requests must be
// refused by another), then of the most sessions.
func busiestReplica(run *teamRun, k int) string {
	stopped, served := map[string]int{}, map[string]int{}
	for i := range teamSessions {
		addr := run.servedBy(i, k)
		served[addr]++
		if stop, _ := teamStop(i); stop > 0 && stop <= k {
			stopped[addr]++
		}
	}
	best := ""
	for addr := range served {
		if best == "" || stopped[addr] > stopped[best] || stopped[addr] == stopped[best] && (served[addr] > served[best] || served[addr] == served[best] && addr < best) {
			best = addr
		}
	}
	return best
}

// checkMoves checks that the run tested what it is meant to: nginx kept
// each session on one replica while all were up, moved only the killed
// replica's sessions, and among those were a session stopped before the
// kill and one still running after it.
func checkMoves(t *testing.T, run *teamRun, killed string, killAfter int) {
	t.Helper()
	movedStopped, movedRunning := 0, 0
	for i := range teamSessions {
		before := run.servedBy(i, 1)
		if before == "" {
			t.Fatalf("%s: no X-Replica from nginx", teamName(i))
		}
		for k := 2; k <= teamTurns; k++ {
			got := run.servedBy(i, k)
			switch {
			case k <= killAfter && got != before, k > killAfter && before != killed && got != before:
				t.Errorf("%s turn %d: served by %s, want %s (affinity)", teamName(i), k, got, before)
			case k > killAfter && got == killed:
				t.Errorf("%s turn %d: served by the killed replica %s", teamName(i), k, got)
			}
		}
		if before != killed {
			continue
		}
		if stop, _ := teamStop(i); stop > 0 && stop <= killAfter {
			movedStopped++
		} else {
			movedRunning++
		}
	}
	if movedStopped == 0 || movedRunning == 0 {
		t.Fatalf("the killed replica %s served %d sessions stopped before the kill and %d running after it: want some of each", killed, movedStopped, movedRunning)
	}
	t.Logf("killed %s after turn %d: %d stopped and %d running sessions moved", killed, killAfter, movedStopped, movedRunning)
}

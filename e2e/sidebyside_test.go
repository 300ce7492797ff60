package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkSideBySide measures onellm-mcp against the bare mcp-go server
// (e2e/internal/baseline) in one run, interleaved, with one minimal raw
// JSON-RPC-over-stdio client for both, and reports p50s and ratios:
//
//   - start: spawn to the initialize response;
//   - first: spawn to the answer of the first tools/call (a small
//     read_file sent right after initialize and the rss sample): what a
//     host waits for before its first tool result, including any start-up
//     work a server defers past the initialize response;
//   - read: one read_file of a 4 KiB file, round trip;
//   - cpu: the server's CPU time per read of the 4 KiB file (every thread's
//     run time from /proc/PID/task/*/schedstat, over a round's reads): on
//     a machine busy with other work the round trip waits for a core, the
//     CPU a call costs does not;
//   - conc: 4 processes × 500 small reads at once, calls per second (the
//     four onellm-mcp share one audit log, as servers on the default path
//     do; conc-own-log gives each its own);
//   - conc-cpu: the servers' CPU time per call over those reads (schedstat,
//     as cpu): what the throughput is made of, and what the load of other
//     work on the machine disturbs least;
//   - rss: resident memory (VmRSS) right after initialize (onellm-mcp
//     opens its audit log and starts its tools after that answer: its
//     start-up is under way);
//   - rss-idle: resident memory once idle, sampleIdle after the first
//     call's answer (onellm-mcp has then started its tools and handed its
//     start-up's garbage and pages back);
//   - peak: peak resident memory (VmHWM) after 2,000 small reads and
//     200 reads of 1 MiB (and, for onellm-mcp, apply_patch edits and
//     commands).
//
// Each b.Loop iteration is one round of every measure, the two servers
// alternating (which goes first alternates too); run enough rounds for
// stable medians, e.g.
//
//	go test ./e2e -run '^$' -bench SideBySide -benchtime 15x
//
// SIDEBYSIDE_AGAINST=/path/to/onellm-mcp puts another build of
// onellm-mcp (with its onellm-sandbox beside it) in the baseline's place,
// to compare two builds interleaved: the ratios are this one's over that
// one's.
//
// Nothing here fails on a figure: a slow machine gives slow figures.
func BenchmarkSideBySide(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	w := &sideBySide{
		four:  f.write(b, "four.txt", strings.Repeat(strings.Repeat("x", 63)+"\n", 64)),
		small: f.write(b, "small.txt", "hello, world\n"),
		mib:   f.write(b, "mib.txt", strings.Repeat(strings.Repeat("y", 63)+"\n", 1<<14-1)),
		edit:  f.write(b, "edit.txt", "one\ntwo\nthree\n"),
		servers: [2]sbsServer{
			{name: "baseline", bin: buildBaseline(b)},
			{name: "onellm-mcp", bin: binary, args: []string{"serve", "--config", f.Config}},
		},
	}
	if against := os.Getenv("SIDEBYSIDE_AGAINST"); against != "" {
		// Another build of onellm-mcp in the baseline's place: the ratios
		// are then this build's over that one's.
		w.servers[0] = sbsServer{name: "against", bin: against, args: w.servers[1].args}
	}
	env := append(os.Environ(), "HOME="+f.Root)
	// onellm-mcp processes with an audit log each, for the concurrent
	// reads without the shared log's lock and following.
	for i := range w.ownLog {
		cfg := filepath.Join(f.Root, fmt.Sprintf("own%d.toml", i))
		body := fmt.Sprintf("workspace = %q\nprofile = \"interactive-dev\"\n[audit]\npath = %q\n", f.Workspace, filepath.Join(f.Root, fmt.Sprintf("own%d.jsonl", i)))
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
		w.ownLog[i] = sbsServer{name: "onellm-mcp", bin: binary, args: []string{"serve", "--config", cfg}, env: env}
	}
	for i := range w.servers {
		w.servers[i].env = env
		// A first start outside the figures: the key is made, the pages
		// are cached.
		s, _, err := spawnRPC(w.servers[i])
		if err != nil {
			b.Fatal(err)
		}
		s.close()
	}
	for b.Loop() {
		if err := w.round(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	for i := range w.servers {
		if err := w.peak(i); err != nil {
			b.Fatal(err)
		}
	}
	w.report(b)
}

// sbsServer is one of the two servers compared.
type sbsServer struct {
	name, bin string
	args, env []string
}

// sideBySide holds the files read and every sample, per server (0 the
// baseline, 1 onellm-mcp).
type sideBySide struct {
	four, small, mib, edit string
	servers                [2]sbsServer
	ownLog                 [4]sbsServer // onellm-mcp, each with its own audit log
	rounds                 int

	start, first, read [2][]time.Duration
	cpu                [2][]time.Duration // per read
	conc               [2][]float64       // calls/s
	concCPU            [2][]time.Duration // per call
	concOwn            []float64          // onellm-mcp, an audit log per process
	concOwnCPU         []time.Duration
	rss                [2][]int // KiB
	rssIdle            [2][]int // KiB
	peakKiB            [2]int
}

// round takes one sample of start-up, the first call and resident memory, 100 read round
// trips (in blocks of 20, alternating) and one concurrent throughput, for
// both servers.
func (w *sideBySide) round() error {
	order := [2]int{0, 1}
	if w.rounds%2 == 1 {
		order = [2]int{1, 0}
	}
	w.rounds++
	var live [2]*rpcProc
	defer func() {
		for _, s := range live {
			if s != nil {
				s.close()
			}
		}
	}()
	for _, i := range order {
		s, d, err := spawnRPC(w.servers[i])
		if err != nil {
			return err
		}
		live[i] = s
		rss, err := procStatus(s.cmd.Process.Pid, "VmRSS:")
		if err != nil {
			return err
		}
		if _, err := s.readFile(w.small, 0); err != nil {
			return err
		}
		w.start[i] = append(w.start[i], d)
		w.first[i] = append(w.first[i], time.Since(s.started))
		w.rss[i] = append(w.rss[i], rss)
	}
	time.Sleep(sampleIdle)
	for _, i := range order {
		rss, err := procStatus(live[i].cmd.Process.Pid, "VmRSS:")
		if err != nil {
			return err
		}
		w.rssIdle[i] = append(w.rssIdle[i], rss)
	}
	var cpu [2]time.Duration
	for range 5 {
		for _, i := range order {
			c0, err := taskCPU(live[i].cmd.Process.Pid)
			if err != nil {
				return err
			}
			for range 20 {
				t0 := time.Now()
				if _, err := live[i].readFile(w.four, 0); err != nil {
					return err
				}
				w.read[i] = append(w.read[i], time.Since(t0))
			}
			c1, err := taskCPU(live[i].cmd.Process.Pid)
			if err != nil {
				return err
			}
			cpu[i] += c1 - c0
		}
	}
	for i := range cpu {
		w.cpu[i] = append(w.cpu[i], cpu[i]/100)
	}
	for _, i := range order {
		rate, perCall, err := w.concurrent(slices.Repeat([]sbsServer{w.servers[i]}, 4), 500)
		if err != nil {
			return err
		}
		w.conc[i] = append(w.conc[i], rate)
		w.concCPU[i] = append(w.concCPU[i], perCall)
	}
	rate, perCall, err := w.concurrent(w.ownLog[:], 500)
	if err != nil {
		return err
	}
	w.concOwn = append(w.concOwn, rate)
	w.concOwnCPU = append(w.concOwnCPU, perCall)
	return nil
}

// sampleIdle is how long after the first call's answer rss-idle is
// sampled: onellm-mcp's background start-up (the sandbox probe, ~10 ms)
// is over well before.
const sampleIdle = 300 * time.Millisecond

// concurrent starts the servers and has each make n sequential small
// reads, all at once; it returns the calls per second over the whole and
// the servers' CPU time per call.
func (w *sideBySide) concurrent(srvs []sbsServer, n int) (float64, time.Duration, error) {
	procs := len(srvs)
	servers := make([]*rpcProc, 0, procs)
	defer func() {
		for _, s := range servers {
			s.close()
		}
	}()
	for _, srv := range srvs {
		s, _, err := spawnRPC(srv)
		if err != nil {
			return 0, 0, err
		}
		servers = append(servers, s)
	}
	cpu0, err := serversCPU(servers)
	if err != nil {
		return 0, 0, err
	}
	errs := make(chan error, procs)
	var wg sync.WaitGroup
	t0 := time.Now()
	for _, s := range servers {
		wg.Go(func() {
			for range n {
				if _, err := s.readFile(w.small, 0); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	cpu1, err := serversCPU(servers)
	if err != nil {
		return 0, 0, err
	}
	return float64(procs*n) / elapsed.Seconds(), (cpu1 - cpu0) / time.Duration(procs*n), nil
}

// serversCPU is the CPU time the servers' threads have run (taskCPU).
func serversCPU(servers []*rpcProc) (time.Duration, error) {
	var sum time.Duration
	for _, s := range servers {
		c, err := taskCPU(s.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

// peak runs the memory workload on a fresh server and records its VmHWM:
// 2,000 small reads, 200 reads of 1 MiB and, for onellm-mcp, 50 edits
// and 20 commands.
func (w *sideBySide) peak(i int) error {
	s, _, err := spawnRPC(w.servers[i])
	if err != nil {
		return err
	}
	defer s.close()
	for range 2000 {
		if _, err := s.readFile(w.small, 0); err != nil {
			return err
		}
	}
	for range 200 {
		resp, err := s.readFile(w.mib, 1<<20)
		if err != nil {
			return err
		}
		if len(resp) < 1<<20 {
			return fmt.Errorf("%s: a 1 MiB read returned %d bytes", w.servers[i].name, len(resp))
		}
	}
	if i == 1 {
		edits := [2]string{
			`{"edits":[{"path":%q,"old_text":"two","new_text":"TWO"}]}`,
			`{"edits":[{"path":%q,"old_text":"TWO","new_text":"two"}]}`,
		}
		for k := range 50 {
			if _, err := s.callTool("apply_patch", fmt.Sprintf(edits[k%2], w.edit)); err != nil {
				return err
			}
		}
		for range 20 {
			if _, err := s.callTool("execute_terminal_command", `{"command":"echo hi"}`); err != nil {
				return err
			}
		}
	}
	w.peakKiB[i], err = procStatus(s.cmd.Process.Pid, "VmHWM:")
	return err
}

// report prints the table and reports every figure as a metric.
func (w *sideBySide) report(b *testing.B) {
	b.ReportMetric(0, "ns/op") // a round's time means nothing
	ms := func(ds []time.Duration) float64 { return float64(median(ds)) / 1e6 }
	us := func(ds []time.Duration) float64 { return float64(median(ds)) / 1e3 }
	mib := func(kib int) float64 { return float64(kib) / 1024 }
	rows := []struct {
		unit      string
		base, one float64
	}{
		{"start-ms", ms(w.start[0]), ms(w.start[1])},
		{"first-call-ms", ms(w.first[0]), ms(w.first[1])},
		{"read-ms", ms(w.read[0]), ms(w.read[1])},
		{"cpu-us/read", us(w.cpu[0]), us(w.cpu[1])},
		{"conc-calls/s", median(w.conc[0]), median(w.conc[1])},
		{"conc-own-log-calls/s", median(w.conc[0]), median(w.concOwn)},
		{"conc-cpu-us/call", us(w.concCPU[0]), us(w.concCPU[1])},
		{"conc-own-log-cpu-us/call", us(w.concCPU[0]), us(w.concOwnCPU)},
		{"rss-MiB", mib(median(w.rss[0])), mib(median(w.rss[1]))},
		{"rss-idle-MiB", mib(median(w.rssIdle[0])), mib(median(w.rssIdle[1]))},
		{"peak-MiB", mib(w.peakKiB[0]), mib(w.peakKiB[1])},
	}
	var t strings.Builder
	fmt.Fprintf(&t, "side by side, %d rounds, p50 (conc: the four onellm-mcp share one audit log, conc-own-log: one each;\npeak: one run, the baseline does the reads only)\n", w.rounds)
	fmt.Fprintf(&t, "| %-20s | %10s | %10s | %6s |\n", "", "onellm-mcp", "baseline", "ratio")
	for _, r := range rows {
		ratio := r.one / r.base
		fmt.Fprintf(&t, "| %-20s | %10.3f | %10.3f | %5.2f× |\n", r.unit, r.one, r.base, ratio)
		b.ReportMetric(r.one, "onellm-"+r.unit)
		b.ReportMetric(r.base, "base-"+r.unit)
		b.ReportMetric(ratio, r.unit[:strings.LastIndex(r.unit, "-")]+"-ratio") // start-ms: start-ratio
	}
	b.Log(t.String())
}

func median[T int | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// rpcProc is a server process driven by a minimal JSON-RPC client over
// its stdin and stdout: one request at a time, no decoding beyond checking
// the response's id and isError, so the client adds as little as it can.
type rpcProc struct {
	name    string
	cmd     *exec.Cmd
	started time.Time // just before the process was started
	in      io.WriteCloser
	out     *bufio.Reader
	next    int
	stderr  bytes.Buffer
}

const rpcInitialize = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"side-by-side","version":"1"}}`

// spawnRPC starts a server and initializes it; the duration is from just
// before the process is started to the initialize response read.
func spawnRPC(srv sbsServer) (*rpcProc, time.Duration, error) {
	s := &rpcProc{name: srv.name, cmd: exec.Command(srv.bin, srv.args...)}
	s.cmd.Env = srv.env
	s.cmd.Stderr = &s.stderr
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		return nil, 0, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	s.out = bufio.NewReaderSize(out, 64<<10)
	s.started = time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", srv.name, err)
	}
	if _, err := s.request("initialize", rpcInitialize); err != nil {
		s.close()
		return nil, 0, err
	}
	d := time.Since(s.started)
	if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		s.close()
		return nil, 0, err
	}
	return s, d, nil
}

// request sends one request and returns its result's line.
func (s *rpcProc) request(method, params string) ([]byte, error) {
	s.next++
	id := strconv.Itoa(s.next)
	if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+"}\n"); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.name, method, err)
	}
	result := []byte(`{"jsonrpc":"2.0","id":` + id + `,"result"`)
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w (stderr: %s)", s.name, method, err, s.stderr.String())
		}
		if bytes.HasPrefix(line, result) {
			return line, nil
		}
		if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method"`)) { // not a notification from the server
			return nil, fmt.Errorf("%s: %s: %.300s", s.name, method, line)
		}
	}
}

// callTool calls a tool; a tool error is an error.
func (s *rpcProc) callTool(name, args string) ([]byte, error) {
	line, err := s.request("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
	if err == nil && bytes.Contains(line, []byte(`"isError":true`)) {
		err = fmt.Errorf("%s: %s: %.300s", s.name, name, line)
	}
	return line, err
}

// readFile reads path with read_file (limit lines when > 0).
func (s *rpcProc) readFile(path string, limit int) ([]byte, error) {
	args := `{"path":` + strconv.Quote(path)
	if limit > 0 {
		args += `,"limit":` + strconv.Itoa(limit)
	}
	return s.callTool("read_file", args+"}")
}

func (s *rpcProc) close() {
	s.in.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// taskCPU is the time every thread of process pid has run (the first
// field of each /proc/PID/task/TID/schedstat, in ns).
func taskCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no threads of %d in /proc: %v", pid, err)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			return 0, fmt.Errorf("%s: %q", t, b)
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", t, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// procStatus reads one KiB field of /proc/PID/status.
func procStatus(pid int, field string) (int, error) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == field {
			return strconv.Atoi(fields[1])
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

package approval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

func TestMemory(t *testing.T) {
	clk := newClock()
	m := newMemory(clk.now, 3)
	withExp := func(d grants.Decision, e time.Duration) grants.Decision { d.ApprovalExpires = e; return d }
	hosts := withExp(askOn("/etc/hosts", "r"), time.Minute)
	written := withExp(grants.Decision{Request: grants.Request{Capability: grants.CapProcessExec, Target: grants.Target{Resource: "deploy.sh", Exe: "/w/deploy.sh"}}, RuleID: "r"}, time.Minute)
	m.remember("alice", []grants.Decision{hosts, askOn("/etc/once", "r") /* no expiry: not kept */, written})

	remembered := func(who string, d grants.Decision) bool { return len(m.unremembered(who, []grants.Decision{d})) == 0 }
	cases := []struct {
		name string
		who  string
		d    grants.Decision
		want bool
	}{
		{"exact request", "alice", hosts, true},
		{"same request, other rule (a reload changed who asks)", "alice", askOn("/etc/hosts", "other"), false},
		{"other principal", "bob", hosts, false},
		{"principal prefix", "alice/s1", hosts, false},
		{"no expiry means once", "alice", askOn("/etc/once", "r"), false},
		{"a program the command may have written: this call only", "alice", written, false},
		{"longer path", "alice", askOn("/etc/hosts.d", "r"), false},
		{"parent path", "alice", askOn("/etc", "r"), false},
		{"other capability", "alice", grants.Decision{Request: grants.Request{Capability: grants.CapFilesystemWrite, Target: hosts.Request.Target}}, false},
		{"other surface", "alice", grants.Decision{Request: grants.Request{Capability: grants.CapFilesystemRead, Target: hosts.Request.Target, Surface: grants.SurfaceHost}}, false},
	}
	for _, tc := range cases {
		if got := remembered(tc.who, tc.d); got != tc.want {
			t.Errorf("%s: remembered=%v, want %v", tc.name, got, tc.want)
		}
	}
	// A call is approved without asking only when all its asks are remembered.
	if left := m.unremembered("alice", []grants.Decision{hosts, askOn("/etc/x", "r")}); len(left) != 1 || left[0].Request.Target.Path != "/etc/x" {
		t.Errorf("mixed call: %v", left)
	}
	clk.advance(time.Minute)
	if remembered("alice", hosts) {
		t.Error("expired approval still holds")
	}
	if len(m.byID) != 0 {
		t.Errorf("expired entries kept: %v", m.byID)
	}
	// Bounded per principal: when full of live keys, new ones are not kept.
	for _, p := range []string{"/a", "/b", "/c", "/d"} {
		m.remember("carol", []grants.Decision{withExp(askOn(p, "r"), time.Hour)})
	}
	if len(m.byID["carol"]) != 3 || remembered("carol", askOn("/d", "r")) {
		t.Errorf("bound: %v", m.byID["carol"])
	}
}

func BenchmarkRememberedLookup(b *testing.B) {
	m := newMemory(time.Now, 4096)
	d := askOn("/home/me/notes/todo.txt", "r")
	d.ApprovalExpires = time.Hour
	for i := range 1000 {
		x := askOn("/p/"+string(rune('a'+i%26))+itoa(i), "r")
		x.ApprovalExpires = time.Hour
		m.remember("stdio", []grants.Decision{x})
	}
	m.remember("stdio", []grants.Decision{d})
	asks := []grants.Decision{d}
	b.ReportAllocs()
	for b.Loop() {
		if len(m.unremembered("stdio", asks)) != 0 {
			b.Fatal("not remembered")
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var s []byte
	for ; i > 0; i /= 10 {
		s = append([]byte{byte('0' + i%10)}, s...)
	}
	return string(s)
}

// BenchmarkApproveRemembered is what an approved-for-session call costs on
// top of a plain allowed one: the server calls Approve only for asks, and a
// remembered ask is settled here without asking.
func BenchmarkApproveRemembered(b *testing.B) {
	br, _ := New(Options{})
	d := askOn("/home/me/notes/todo.txt", "r")
	d.ApprovalExpires = time.Hour
	br.mem.remember("stdio", []grants.Decision{d})
	call := toolkit.ApprovalCall{Tool: "read_file", Args: []byte(`{"path":"/home/me/notes/todo.txt"}`), Principal: "stdio",
		Asks: []grants.Decision{d}, Policy: testPolicy(time.Minute)}
	b.ReportAllocs()
	for b.Loop() {
		if o, _ := br.Approve(context.Background(), call); o.Reason != grants.ReasonApprovedForSession {
			b.Fatal(o)
		}
	}
}

// An "allow for session" answer holds for exactly the request the person
// saw: the same POST carrying credential data (the principal has since read
// a secret), or the same request at a higher risk, is asked again.
func TestMemoryBindsDataClassesAndRisk(t *testing.T) {
	clk := newClock()
	m := newMemory(clk.now, 8)
	post := grants.Decision{Request: grants.Request{Capability: grants.CapHTTPPost,
		Target: grants.Target{ToolName: "http_request", Host: "api.example.com", Path: "/upload", Port: 443}, Risk: grants.RiskHigh},
		Effect: grants.Ask, Reason: grants.ReasonMatchedAsk, RuleID: "ask-net", ApprovalExpires: time.Hour}
	m.remember("alice", []grants.Decision{post})
	if left := m.unremembered("alice", []grants.Decision{post}); len(left) != 0 {
		t.Fatalf("the exact request is not remembered")
	}
	withCred := post
	withCred.Request.DataClasses = []grants.DataClass{grants.DataCredential}
	if left := m.unremembered("alice", []grants.Decision{withCred}); len(left) != 1 {
		t.Error("an approval given without credential data holds for the same request carrying credential data")
	}
	critical := post
	critical.Request.Risk = grants.RiskCritical
	if left := m.unremembered("alice", []grants.Decision{critical}); len(left) != 1 {
		t.Error("an approval given at risk high holds for the same request at risk critical")
	}
}

// TestMemoryIsExactForCommands: an "allow for session" of a command holds
// for exactly its words, its folder and every target field: a quoted word
// with a space is not two words, another cwd asks again.
func TestMemoryIsExactForCommands(t *testing.T) {
	clk := newClock()
	m := newMemory(clk.now, 16)
	exec := func(cwd string, argv ...string) grants.Decision {
		return grants.Decision{Request: grants.Request{Capability: grants.CapProcessExec,
			Target: grants.Target{ToolName: "execute_terminal_command", Resource: argv[0], Command: strings.Join(argv, " ")},
			Risk:   grants.RiskMedium, Surface: grants.SurfaceSandbox, Argv: argv, Cwd: cwd},
			Effect: grants.Ask, RuleID: "r", ApprovalExpires: time.Hour}
	}
	approved := exec("/ws", "touch", "m1 m2")
	m.remember("alice", []grants.Decision{approved})
	other := func(f func(*grants.Decision)) grants.Decision { d := approved; f(&d); return d }
	cases := []struct {
		name string
		d    grants.Decision
		want bool
	}{
		{"the same words in the same folder", exec("/ws", "touch", "m1 m2"), true},
		{"two words where one was approved", exec("/ws", "touch", "m1", "m2"), false},
		{"another folder", exec("/ws/sub", "touch", "m1 m2"), false},
		{"another option", other(func(d *grants.Decision) { d.Request.Target.Option = "x" }), false},
		{"another tool name", other(func(d *grants.Decision) { d.Request.Target.ToolName = "t" }), false},
		{"another resource", other(func(d *grants.Decision) { d.Request.Target.Resource = "/bin/touch" }), false},
		{"higher risk", other(func(d *grants.Decision) { d.Request.Risk = grants.RiskHigh }), false},
		{"with credential data", other(func(d *grants.Decision) { d.Request.DataClasses = []grants.DataClass{grants.DataCredential} }), false},
	}
	for _, tc := range cases {
		if got := len(m.unremembered("alice", []grants.Decision{tc.d})) == 0; got != tc.want {
			t.Errorf("%s: remembered=%v, want %v", tc.name, got, tc.want)
		}
	}
	// The person is shown the words as they are told apart.
	if got := approved.Request.Describe(); got != "process.exec `touch 'm1 m2'`" {
		t.Errorf("Describe = %q", got)
	}
}

package telemetry

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksOnlyTheSDK: every package this one links, beyond the standard
// library and what its imports from this module link anyway, is one the
// SDK's span package links itself. Every linked package's initialisers run at each start-up,
// telemetry on or off; the SDK's own (about 0.15–0.2 ms here, README
// "Telemetry") cannot be avoided while spans are the official SDK's, but
// nothing may add to them: no stock exporter (otlptracehttp links protobuf
// and gRPC, ~0.6 ms more), no other semconv version, no detector package.
func TestLinksOnlyTheSDK(t *testing.T) {
	sdk := nonStd(t, "go.opentelemetry.io/otel/sdk/trace")
	self := module + "server/telemetry"
	all := nonStd(t, ".")
	var mine []string
	for p := range all {
		if strings.HasPrefix(p, module) && p != self {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		t.Fatal("no imports from the module found")
	}
	own := nonStd(t, mine...)
	for p := range all {
		if !own[p] && !sdk[p] && p != self {
			t.Errorf("server/telemetry links %s, which go.opentelemetry.io/otel/sdk/trace does not: its init would run at every start-up", p)
		}
	}
}

const module = "github.com/onellm/onellm-mcp/"

// nonStd is the set of non-standard packages pkgs depend on (themselves
// included), from go list.
func nonStd(t *testing.T, pkgs ...string) map[string]bool {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		set[p] = true
	}
	if len(set) == 0 {
		t.Fatalf("go list %v: no packages", pkgs)
	}
	return set
}

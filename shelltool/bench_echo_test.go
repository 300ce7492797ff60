package shelltool

import (
	"context"
	"testing"
)

// BenchmarkToolEcho is `echo hi` through the tool's Plan and Run, the
// sandbox and its warm helper included, without the server's decision and
// audit or the transport: the server-side share of a command's path
// (profile it with -cpuprofile; the helper runs in its own processes).
func BenchmarkToolEcho(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	g := &allowAll{}
	env := envFor(f, g)
	raw := []byte(`{"command":"echo hi"}`)
	ctx := context.Background()
	for b.Loop() {
		plan, err := f.tool.Plan(ctx, env, raw)
		if err != nil {
			b.Fatal(err)
		}
		res := plan.Run(ctx, grantAll(plan))
		if res.Tool.IsError {
			b.Fatal(text(res.Tool))
		}
	}
}

package approval

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// An ask that moved to its server's new connection (the same pid joined
// again before its old connection's end was seen) stays listed when the
// old connection's end is seen: finishing the old ticket must not remove
// the new one, which has the same id.
func TestInboxMovedAskSurvivesOldConnEnd(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := join(t, addr, dir, "alpha", nil)
	a.role(t)
	post := fmt.Sprintf(`{"type":"hello","version":2,"addr":%q,"server":"x"}`+"\n"+
		`{"type":"post","id":%q,"ask":{"kind":"approval","tool":"read_file","items":[{"what":"w","rule":"r","risk":"low","session":"once"}],"context":{},"deadline_ms":%d}}`+"\n",
		addr, goodID, time.Now().Add(time.Minute).UnixMilli())
	var conns []net.Conn
	var owner *peer
	for range 2 {
		conn, err := net.Dial("unix", a.c.inbox.sock)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		conn.Write([]byte(post))
		prev := owner
		awaitConsole(t, a.c, "moved", func() bool {
			got := a.c.lookup(goodID)
			if got == nil || got.route == nil || got.route.p == prev {
				return false
			}
			owner = got.route.p
			return true
		})
	}
	conns[0].Close() // the old connection's end is seen now
	a.log.await(t, "left (1 pending asks withdrawn)")
	if a.c.lookup(goodID) == nil {
		t.Errorf("the ask that moved to the new connection was removed when the old connection ended (finished() matches by id)")
	}
	conns[1].Close()
}

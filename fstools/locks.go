package fstools

import (
	"slices"
	"sync"
)

// pathLocks serialises the calls that change the same file, by real path:
// a patch holds the lock of every path it reads or writes, from its read to
// its last rename, so two calls of this server never lose each other's
// update. (Other processes are caught by the comparison before and after
// each switch, commit.go.)
type pathLocks struct {
	mu    sync.Mutex
	locks map[string]*pathLock
}

type pathLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes the locks of paths, in sorted order so that two patches over
// the same files cannot deadlock, and returns the function releasing them.
func (l *pathLocks) lock(paths []string) (unlock func()) {
	paths = slices.Compact(slices.Sorted(slices.Values(paths)))
	held := make([]*pathLock, 0, len(paths))
	for _, p := range paths {
		l.mu.Lock()
		if l.locks == nil {
			l.locks = map[string]*pathLock{}
		}
		pl := l.locks[p]
		if pl == nil {
			pl = &pathLock{}
			l.locks[p] = pl
		}
		pl.refs++
		l.mu.Unlock()
		pl.mu.Lock()
		held = append(held, pl)
	}
	return func() {
		for i, pl := range held {
			pl.mu.Unlock()
			l.mu.Lock()
			if pl.refs--; pl.refs == 0 {
				delete(l.locks, paths[i])
			}
			l.mu.Unlock()
		}
	}
}

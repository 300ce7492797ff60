package oauth

import (
	"crypto/sha256"
	"sync"
	"time"
)

const (
	// verifiedTTL is how long a verified token is trusted without checking
	// its signature again (its own exp still applies on every use). Short,
	// so a retired key stops working soon after the cache drops it.
	verifiedTTL = time.Minute
	// maxVerified bounds the cache; past it, expired entries go first and
	// then all.
	maxVerified = 4096
)

// verifiedCache remembers tokens that verified, by SHA-256, so a client
// sending the same token on every call pays for one signature check a
// minute, not one per call.
type verifiedCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]verified
}

type verified struct {
	p     Principal
	until time.Time
}

func (c *verifiedCache) get(raw string, now time.Time, leeway time.Duration) (Principal, bool) {
	key := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.After(e.until) || now.After(e.p.Expiry.Add(leeway)) {
		return Principal{}, false
	}
	return e.p, true
}

func (c *verifiedCache) put(raw string, p Principal, now time.Time) {
	key := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[[sha256.Size]byte]verified)
	}
	if len(c.entries) >= maxVerified {
		for k, e := range c.entries {
			if now.After(e.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxVerified {
			clear(c.entries)
		}
	}
	c.entries[key] = verified{p: p, until: now.Add(verifiedTTL)}
}

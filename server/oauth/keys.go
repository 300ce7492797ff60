package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	// refreshEvery is how old the cached keys may get before a token makes
	// the cache fetch them again.
	refreshEvery = 10 * time.Minute
	// minRefetch bounds how often an unknown kid may make us fetch: a
	// client sending made-up kids cannot turn us into a load on the issuer.
	minRefetch = 30 * time.Second
	// maxJWKSBytes caps a JWKS document.
	maxJWKSBytes = 1 << 20
	// fetchTimeout bounds one fetch of the JWKS.
	fetchTimeout = 5 * time.Second
	// maxStale is how long past their last successful fetch the cached
	// keys still verify while the issuer cannot be reached; after that no
	// token gets through until it can be.
	maxStale = time.Hour
)

// Doer sends one HTTP request (an *http.Client).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// defaultClient fetches the JWKS: the only outbound connection outside
// webtools, to the jwks_url the host's config names.
func defaultClient() Doer { return &http.Client{Timeout: 10 * time.Second} }

// keyCache holds the issuer's signing keys.
type keyCache struct {
	cfg Config

	mu      sync.Mutex
	set     jose.JSONWebKeySet
	fetched time.Time // when set was last fetched successfully
	tried   time.Time // when a fetch was last attempted
}

func newKeyCache(cfg Config) *keyCache { return &keyCache{cfg: cfg} }

// lookup returns the key that may verify a token with this kid and alg,
// fetching the keys when they are stale or the kid is unknown.
func (c *keyCache) lookup(ctx context.Context, kid string, alg jose.SignatureAlgorithm) (jose.JSONWebKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	var fetchErr error
	due := c.fetched.IsZero() || now.Sub(c.fetched) > refreshEvery
	if due && (c.tried.IsZero() || now.Sub(c.tried) >= minRefetch) {
		// At most one fetch per minRefetch, even while the issuer is down:
		// requests with made-up tokens cannot make us hammer it.
		fetchErr = c.refresh(ctx, now)
	} else if due {
		fetchErr = errors.New("the last fetch failed; retrying at most every 30 s")
	}
	if fetchErr != nil && (c.fetched.IsZero() || now.Sub(c.fetched) > maxStale) {
		return jose.JSONWebKey{}, fmt.Errorf("the issuer's keys cannot be fetched: %v", fetchErr)
	}
	if k, err := c.find(kid, alg); err == nil {
		return k, nil
	}
	if fetchErr == nil && now.Sub(c.tried) >= minRefetch {
		fetchErr = c.refresh(ctx, now)
	}
	k, err := c.find(kid, alg)
	if err != nil && fetchErr != nil {
		return jose.JSONWebKey{}, fmt.Errorf("%v, and the issuer's keys cannot be fetched: %v", err, fetchErr)
	}
	return k, err
}

// find picks the key: by kid when the token names one, else the only
// usable key.
func (c *keyCache) find(kid string, alg jose.SignatureAlgorithm) (jose.JSONWebKey, error) {
	var found []jose.JSONWebKey
	for _, k := range c.set.Keys {
		if (kid == "" || k.KeyID == kid) && usableKey(k, alg) {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1 && kid == "":
		return jose.JSONWebKey{}, errors.New("the token names no kid and the issuer has several keys")
	case len(found) > 1:
		return jose.JSONWebKey{}, fmt.Errorf("the issuer has several keys with kid %q", kid)
	}
	return jose.JSONWebKey{}, fmt.Errorf("no key of the issuer can verify it (kid %q, alg %s)", kid, alg)
}

// refresh fetches the keys; on failure the cached ones stay.
func (c *keyCache) refresh(ctx context.Context, now time.Time) error {
	c.tried = now
	raw, err := c.read(ctx)
	if err != nil {
		return err
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return fmt.Errorf("the JWKS does not parse: %w", err)
	}
	c.set, c.fetched = set, now
	return nil
}

func (c *keyCache) read(ctx context.Context) ([]byte, error) {
	if c.cfg.JWKSFile != "" {
		b, err := os.ReadFile(c.cfg.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("jwks_file: %w", err)
		}
		return b, nil
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.JWKSURL, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks_url: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks_url: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks_url: %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwks_url: %w", err)
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("jwks_url: the JWKS is over %d bytes", maxJWKSBytes)
	}
	return b, nil
}

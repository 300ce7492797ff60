package auditlog

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/mod/sumdb/note"
)

// KeyName is the signer name in every checkpoint's signature line.
const KeyName = "onellm-mcp-audit"

// Key file names inside the private folder.
const (
	privateKeyFile = "audit.key" // "*.key": read_file treats it as credential data too
	publicKeyFile  = "audit.pub"
)

// Key is the checkpoint signing key.
type Key struct {
	signer note.Signer
	vkey   string
}

// Verifier is the public half, as `audit key` prints it.
func (k *Key) Verifier() string { return k.vkey }

// Origin is the checkpoint origin line for this key: one log per key.
func (k *Key) Origin() string { return originFor(k.signer.KeyHash()) }

func originFor(hash uint32) string { return fmt.Sprintf("onellm-mcp.local/audit/%08x", hash) }

// LoadOrCreateKey reads the signing key from dir, making it (and dir,
// 0700) at first use. A key file that is not a regular file owned by this
// user, or that others may read or write, is refused, as ssh refuses such
// keys.
func LoadOrCreateKey(dir string) (*Key, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit key folder: %w", err)
	}
	path := filepath.Join(dir, privateKeyFile)
	skey, err := readPrivate(path)
	if errors.Is(err, os.ErrNotExist) {
		skey, err = createKey(dir)
	}
	if err != nil {
		return nil, err
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("audit key %s: %v", path, err)
	}
	vkey, err := verifierFromSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("audit key %s: %v", path, err)
	}
	return &Key{signer: signer, vkey: vkey}, nil
}

// LoadVerifier is the public key of the key in dir: derived from the
// private key when this user can read it (so a replaced audit.pub is never
// trusted), else read from audit.pub.
func LoadVerifier(dir string) (string, error) {
	if skey, err := readPrivate(filepath.Join(dir, privateKeyFile)); err == nil {
		return verifierFromSigner(skey)
	}
	b, err := os.ReadFile(filepath.Join(dir, publicKeyFile))
	if err != nil {
		return "", fmt.Errorf("audit public key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func readPrivate(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("audit key: %w", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || st == nil || int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("audit key %s is not a regular file owned by this user; remove it to make a new key", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("audit key %s is readable or writable by others (mode %04o); fix with: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("audit key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// createKey makes a new key; when another server made one at the same
// moment, that one is used. The key is written whole to a file of its own
// and then linked to its name, so a server starting beside this one never
// reads a key file still being written (it would refuse its log).
func createKey(dir string) (string, error) {
	skey, vkey, err := note.GenerateKey(rand.Reader, KeyName)
	if err != nil {
		return "", fmt.Errorf("audit key: %v", err)
	}
	path := filepath.Join(dir, privateKeyFile)
	tmp, err := os.CreateTemp(dir, "."+privateKeyFile+".new-*") // 0600
	if err != nil {
		return "", fmt.Errorf("audit key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(skey + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("audit key: %w", err)
	}
	switch err := os.Link(tmp.Name(), path); {
	case errors.Is(err, os.ErrExist):
		return readPrivate(path)
	case err != nil: // a file system without hard links
		if made, err := writeKeyInPlace(path, skey); err != nil || made != skey {
			return made, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, publicKeyFile), []byte(vkey+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("audit public key: %w", err)
	}
	return skey, nil
}

// writeKeyInPlace creates the key file with O_EXCL and writes skey to it,
// returning the key in use: the one another server made meanwhile, if so.
func writeKeyInPlace(path, skey string) (string, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, os.ErrExist) {
		return readPrivate(path)
	}
	if err != nil {
		return "", fmt.Errorf("audit key: %w", err)
	}
	if _, err := f.WriteString(skey + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("audit key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", fmt.Errorf("audit key: %w", err)
	}
	return skey, f.Close()
}

// verifierFromSigner derives the verifier key string from a signer key
// ("PRIVATE+KEY+name+hash+key"): the public key is recomputed, so a
// mismatching audit.pub can never be trusted by accident.
func verifierFromSigner(skey string) (string, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return "", err
	}
	pub, err := publicFromSigner(skey)
	if err != nil {
		return "", err
	}
	return note.NewEd25519VerifierKey(s.Name(), pub)
}

// ParseVerifier accepts a verifier key, or the path of a file holding one.
func ParseVerifier(s string) (note.Verifier, error) {
	if v, err := note.NewVerifier(s); err == nil {
		return v, nil
	}
	if !strings.HasPrefix(s, KeyName+"+") {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		s = strings.TrimSpace(string(b))
	}
	v, err := note.NewVerifier(s)
	if err != nil {
		return nil, fmt.Errorf("public key %q: %v", s, err)
	}
	return v, nil
}

// publicFromSigner reads the Ed25519 seed out of a signer key
// ("PRIVATE+KEY+name+hash+base64(0x01 || seed)") and returns its public key.
func publicFromSigner(skey string) (ed25519.PublicKey, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 {
		return nil, fmt.Errorf("malformed signer key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return nil, fmt.Errorf("malformed signer key")
	}
	return ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey), nil
}

// verifier is the key's public half as a note verifier.
func (k *Key) verifier() note.Verifier {
	v, err := note.NewVerifier(k.vkey)
	if err != nil {
		panic("bug: a key's own verifier does not parse: " + err.Error())
	}
	return v
}

package auditlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// walker follows a chain record by record: the one check of seq, prev,
// tree and checkpoints that resuming, verifying and proving share.
type walker struct {
	h         head
	started   bool
	first     uint64 // seq of the first record walked
	signedSeq uint64 // seq after the last checkpoint walked
	// verifiers check checkpoint signatures; nil checks only that each
	// checkpoint's root is the tree's.
	verifiers note.Verifiers
	// leaves, when non-nil, collects every leaf hash walked (for proofs).
	leaves *[][]byte
}

// step takes the next line (without its newline).
func (w *walker) step(line []byte) (chainFields, error) {
	c, err := parseChain(line)
	if err != nil {
		return c, err
	}
	seq := *c.Seq
	if !w.started {
		if !c.isCheckpoint() {
			return c, fmt.Errorf("the file does not start with a checkpoint")
		}
		tree, err := c.treeRange()
		if err != nil {
			return c, err
		}
		w.h = head{seq: seq, tree: tree}
		w.first, w.started = seq, true
	} else {
		if seq != w.h.seq {
			if seq > w.h.seq {
				return c, fmt.Errorf("seq %d follows seq %d: record %d is missing", seq, w.h.seq-1, w.h.seq)
			}
			return c, fmt.Errorf("seq %d follows seq %d: records are out of order or repeated", seq, w.h.seq-1)
		}
		var want [64]byte
		if hex.Encode(want[:], w.h.prev[:]); !bytes.Equal(c.prev, want[:]) {
			return c, &changedError{seq: seq - 1}
		}
	}
	if c.isCheckpoint() {
		if err := w.checkpoint(c); err != nil {
			return c, err
		}
	}
	lh := leafHash(line)
	w.h.tree.Append(lh, nil)
	if w.leaves != nil {
		*w.leaves = append(*w.leaves, lh)
	}
	w.h.prev = sha256.Sum256(line)
	w.h.seq++
	if c.isCheckpoint() {
		w.signedSeq = w.h.seq
	}
	return c, nil
}

// checkpoint checks a checkpoint record against the tree walked so far.
func (w *walker) checkpoint(c chainFields) error {
	if c.TreeSize == nil || *c.TreeSize != *c.Seq {
		return fmt.Errorf("checkpoint tree_size is not its seq")
	}
	root, err := w.root()
	if err != nil {
		return err
	}
	if w.started && *c.Seq != w.first {
		want := w.h.tree.Hashes()
		if len(want) != len(c.Range) {
			return fmt.Errorf("checkpoint range does not match the records before it")
		}
		for i, h := range want {
			if hex.EncodeToString(h) != c.Range[i] {
				return fmt.Errorf("checkpoint range does not match the records before it")
			}
		}
	}
	cp, err := openCheckpoint(c.Checkpoint, w.verifiers)
	if err != nil {
		return err
	}
	if cp.size != *c.Seq {
		return fmt.Errorf("checkpoint note names tree size %d, the record is at seq %d", cp.size, *c.Seq)
	}
	if !bytes.Equal(cp.root, root) {
		return fmt.Errorf("checkpoint root does not match the records before it")
	}
	return nil
}

func (w *walker) root() ([]byte, error) {
	root, err := w.h.tree.GetRootHash(nil)
	if err != nil {
		return nil, err
	}
	if root == nil {
		root = emptyRoot()
	}
	return root, nil
}

// signedCheckpoint is a parsed tlog-checkpoint note.
type signedCheckpoint struct {
	origin string
	size   uint64
	root   []byte
}

// openCheckpoint parses a checkpoint note, checking its signature with
// verifiers (any signature when nil) and its origin against the key.
func openCheckpoint(text string, verifiers note.Verifiers) (signedCheckpoint, error) {
	var body string
	if verifiers != nil {
		n, err := note.Open([]byte(text), verifiers)
		if err != nil {
			return signedCheckpoint{}, fmt.Errorf("checkpoint signature does not verify: %v", err)
		}
		body = n.Text
		if len(n.Sigs) > 0 {
			if o := originFor(n.Sigs[0].Hash); !strings.HasPrefix(body, o+"\n") {
				return signedCheckpoint{}, fmt.Errorf("checkpoint origin is not %s", o)
			}
		}
	} else {
		i := strings.Index(text, "\n\n")
		if i < 0 {
			return signedCheckpoint{}, fmt.Errorf("checkpoint is not a signed note")
		}
		body = text[:i+1]
	}
	lines := strings.SplitN(body, "\n", 4)
	if len(lines) < 4 {
		return signedCheckpoint{}, fmt.Errorf("checkpoint note is malformed")
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return signedCheckpoint{}, fmt.Errorf("checkpoint tree size: %v", err)
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return signedCheckpoint{}, fmt.Errorf("checkpoint root is not a SHA-256")
	}
	return signedCheckpoint{origin: lines[0], size: size, root: root}, nil
}

// headAfterCheckpoint is the head after one checkpoint line.
func headAfterCheckpoint(line []byte, verifiers note.Verifiers) (head, error) {
	w := walker{verifiers: verifiers}
	if _, err := w.step(line); err != nil {
		return head{}, err
	}
	return w.h, nil
}

// fileHead is the head at a file's end and where its last checkpoint left it.
type fileHead struct {
	head
	signedSeq uint64
}

// readHead finds the chain's head at the end of the locked file: from its
// last checkpoint on, every record checked. A torn last line (a crash in
// the middle of a write) is cut off. end is the file's size after that.
// Checkpoints are checked against verifiers.
func readHead(f *os.File, size int64, logger *log.Logger, verifiers note.Verifiers) (fileHead, int64, error) {
	end, err := cutTornTail(f, size, logger)
	if err != nil || end == 0 {
		return fileHead{}, end, err
	}
	for window := int64(64 << 10); ; window *= 2 {
		start := max(0, end-window)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return fileHead{}, end, fmt.Errorf("reading: %v", err)
		}
		lines := bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n"))
		if start > 0 {
			lines = lines[1:] // cut by the window
		}
		if len(lines) > 0 {
			if _, err := parseChain(lines[len(lines)-1]); err != nil {
				return fileHead{}, end, fmt.Errorf("%w: its last line: %v", errNotChained, err)
			}
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if !bytes.Contains(lines[i], []byte(`"checkpoint"`)) {
				continue
			}
			if c, err := parseChain(lines[i]); err != nil || !c.isCheckpoint() {
				continue
			}
			w := walker{verifiers: verifiers}
			for j, line := range lines[i:] {
				if _, err := w.step(line); err != nil {
					return fileHead{}, end, fmt.Errorf("record %d from the end: %v", len(lines)-i-j, err)
				}
			}
			return fileHead{head: w.h, signedSeq: w.signedSeq}, end, nil
		}
		if start == 0 {
			return fileHead{}, end, errNotChained
		}
	}
}

// cutTornTail removes a last line without its newline.
func cutTornTail(f *os.File, size int64, logger *log.Logger) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return size, fmt.Errorf("reading: %v", err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	end := size - 1
	chunk := make([]byte, 4096)
	for end > 0 {
		n := int64(len(chunk))
		if end < n {
			n = end
		}
		if _, err := f.ReadAt(chunk[:n], end-n); err != nil {
			return size, fmt.Errorf("reading: %v", err)
		}
		if i := bytes.LastIndexByte(chunk[:n], '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if err := f.Truncate(end); err != nil {
		return size, fmt.Errorf("cutting a torn last record: %v", err)
	}
	logger.Printf("audit log %s: cut a torn last record (%d bytes without a newline, from a write that did not finish)", f.Name(), size-end)
	return end, nil
}

func trimNewline(b []byte) []byte { return bytes.TrimRight(b, "\n") }

// changedError: a record's prev is not the hash of the record before it,
// so that earlier record (or this prev) was changed.
type changedError struct{ seq uint64 }

func (e *changedError) Error() string {
	return fmt.Sprintf("record %d does not hash to the prev of record %d: it was changed", e.seq, e.seq+1)
}
